/** What the run form may offer (contract §14): the caller's execute grants with their targets, from GET /api/run/scope. */
import type { Static } from '@sinclair/typebox'
import type { RunGrantOut, RunScopeOut } from '../../features/salt-actions/schema'
import { globRe } from './glob-re'

/** One execute grant: the salt functions (`salt:<glob>`) and the minions (salt's glob on ids) it allows. */
export type RunGrant = Static<typeof RunGrantOut>
/** GET /api/run/scope. */
export type RunScope = Static<typeof RunScopeOut>

/** The function glob a grant names, without `salt:` (`*` for a grant on every resource). */
export const functionsOf = (g: RunGrant) => (g.resource_glob.startsWith('salt:') ? g.resource_glob.slice(5) : g.resource_glob)

/** A grant in words: `test.* on web-*`, or `test.* on any minion`. */
export const grantText = (g: RunGrant) => `${functionsOf(g)} on ${g.target_glob === '*' ? 'any minion' : g.target_glob}`

/** The minion globs the grants allow a function on; empty when no grant allows the function anywhere. */
export function targetsFor(grants: RunGrant[], fun: string): string[] {
  const out = grants.filter((g) => globRe(g.resource_glob).test(`salt:${fun}`)).map((g) => g.target_glob)
  return out.includes('*') ? ['*'] : [...new Set(out)]
}

/** Functions the grants name exactly (no glob character), for the function field's suggestions. */
export const exactFunctions = (grants: RunGrant[]) => [...new Set(grants.map(functionsOf).filter((f) => !/[*?[]/.test(f)))].sort()

/**
 * The line under the function field: what the typed function may run on, or that no grant allows it (the server would
 * answer `Not allowed: function <fun>`); null while nothing is typed or the function is allowed everywhere.
 */
export function functionNote(grants: RunGrant[], fun: string): { allowed: boolean; text: string } | null {
  const f = fun.trim()
  if (!f) return null
  const targets = targetsFor(grants, f)
  if (!targets.length) return { allowed: false, text: `Your roles do not allow ${f}.` }
  if (targets[0] === '*') return null
  return { allowed: true, text: `${f} is allowed on minions matching ${targets.join(', ')}; a target that reaches any other minion is refused.` }
}
