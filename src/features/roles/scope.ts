/**
 * Scoped permissions (contract §14): `execute salt:<function glob>` grants with a `target_glob`, salt's glob on minion
 * ids. A job is allowed when every minion it reaches is covered, for the job's function, by at least one grant.
 */
import { globCanMatchPrefix, globMatch, saltGlobMatch } from '../../lib/glob'
import type { Grant, ScopedGrant } from './service'

/** The resource an execute grant names for a salt function. */
export const saltResource = (fun: string) => `salt:${fun}`

/** The grants that let the holder run `fun` (on the minions of their target_glob). */
export function grantsForFunction(grants: ScopedGrant[], fun: string): ScopedGrant[] {
  return grants.filter((g) => globMatch(g.verb, 'execute') && globMatch(g.resource_glob, saltResource(fun)))
}

/** The grants that may allow running some salt function on some minion: what the run form offers. */
export function executeGrants(grants: ScopedGrant[]): ScopedGrant[] {
  return grants.filter((g) => globMatch(g.verb, 'execute') && globCanMatchPrefix(g.resource_glob, 'salt:'))
}

/** Whether a grant's verb and resource can apply to some resource of a kind (`salt:`, `key:`, `job:`) for a verb. */
export const mayApply = (g: Grant, verb: string, kind: string) => globMatch(g.verb, verb) && globCanMatchPrefix(g.resource_glob, `${kind}:`)

/** The minions among `minions` that no grant covers for `fun`, in the order given. */
export function uncovered(grants: ScopedGrant[], fun: string, minions: string[]): string[] {
  const gs = grantsForFunction(grants, fun)
  if (gs.some((g) => g.target_glob === '*')) return []
  return minions.filter((m) => !gs.some((g) => saltGlobMatch(g.target_glob, m)))
}

/** How many refused minions a refusal names before it says "…". */
const NAMED = 10

/** The 403 sentence of a job refused on some minions: `Not allowed: <function> on <n> minions (a, b, …)`. */
export function refusedOn(fun: string, minions: string[]): string {
  const names = [...minions].sort()
  const shown = names.slice(0, NAMED).join(', ') + (names.length > NAMED ? ', …' : '')
  return `Not allowed: ${fun} on ${names.length} minions (${shown})`
}

/** The 403 sentence of a function no grant allows anywhere. */
export const refusedFunction = (fun: string) => `Not allowed: function ${fun}`
