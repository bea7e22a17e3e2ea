/**
 * Publishing a job for a user (contract §14): the function, then every minion salt's master matches for the target,
 * checked against the user's scoped grants; the job then goes to exactly those minions as a list, so salt cannot
 * widen it. Nothing is published when anything is refused.
 */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { expandTarget } from '../../salt/targets'
import { Forbidden, NotFound } from '../../lib/errors'
import { newJid } from '../../lib/salt-time'
import { markJob } from '../jobs/service'
import { notePublished } from '../jobs/trust'
import { scopedGrantsOf } from '../roles/service'
import { executeGrants, grantsForFunction, refusedFunction, refusedOn, uncovered } from '../roles/scope'
import { minionSourcesOf } from '../minions/service'

/** A command as POST /api/run takes it. */
export interface RunRequest {
  tgt: string | string[]
  tgt_type: string
  fun: string
  arg: unknown[]
  kwarg: Record<string, unknown>
}

const noMinions = () => new NotFound('Minion', 'No minions matched the target')

/**
 * The salt-apis a job may go through (contract §15 "Several masters"): every running source with a complete connection,
 * `default` first with the client the caller gave; that client alone while there is one source.
 */
function routes(deps: AppDeps, client: SaltClient): { source: string; client: SaltClient }[] {
  const sides = (deps.salt?.sources() ?? []).filter((s) => s.source === 'default' || s.configured())
  if (sides.length <= 1) return [{ source: 'default', client }]
  return sides.map((s) => ({ source: s.source, client: s.source === 'default' ? client : s.client }))
}

/** The minions every source's master matches for a target, sorted (a minion of two masters once). */
export async function expandEverywhere(deps: AppDeps, client: SaltClient, tgt: string | string[], tgtType: string): Promise<string[]> {
  const via = routes(deps, client)
  if (via.length === 1) return expandTarget(client, tgt, tgtType)
  const all = new Set<string>()
  for (const r of via) for (const id of await expandTarget(r.client, tgt, tgtType)) all.add(id)
  return [...all].sort()
}

/**
 * Which source each minion's job goes through: one it has been seen through (`default` first, so a minion of salt's
 * multi-master runs the job once), else `default`. In the order of the sources.
 */
async function partition(deps: AppDeps, client: SaltClient, minions: string[]) {
  const via = routes(deps, client)
  if (via.length === 1) return [{ ...via[0]!, minions }]
  const seen = await minionSourcesOf(deps, minions)
  const running = new Set(via.map((r) => r.source))
  const groups = new Map<string, string[]>()
  for (const id of minions) {
    const names = seen.get(id) ?? []
    const name = names.includes('default') ? 'default' : (names.find((n) => running.has(n)) ?? 'default')
    groups.set(name, [...(groups.get(name) ?? []), id])
  }
  return via.filter((r) => groups.has(r.source)).map((r) => ({ ...r, minions: groups.get(r.source)! }))
}

/** Checks and publishes a job for a user; Forbidden with the contract's sentence, NotFound when the target matches nothing. */
export async function runForUser(deps: AppDeps, client: SaltClient, user: { userId: string; username: string }, req: RunRequest) {
  return publishChecked(deps, client, user.username, await checkedMinions(deps, client, user.userId, req), req)
}

/** The execute grants a user holds, with their targets: what the run form offers. */
export async function runScope(deps: AppDeps, userId: string) {
  return { grants: executeGrants(await scopedGrantsOf(deps, userId)).map((g) => ({ resource_glob: g.resource_glob, target_glob: g.target_glob })) }
}

/** The checks of a run: the minions salt matches for the target, every one covered for the function by the user's grants. */
export async function checkedMinions(deps: AppDeps, client: SaltClient, userId: string, req: Pick<RunRequest, 'tgt' | 'tgt_type' | 'fun'>): Promise<string[]> {
  const grants = await scopedGrantsOf(deps, userId)
  if (!grantsForFunction(grants, req.fun).length) throw new Forbidden(refusedFunction(req.fun))
  const minions = await expandEverywhere(deps, client, req.tgt, req.tgt_type)
  if (!minions.length) throw noMinions()
  const refused = uncovered(grants, req.fun, minions)
  if (refused.length) throw new Forbidden(refusedOn(req.fun, refused))
  return minions
}

/**
 * Publishes a job to checked minions as a list (a whole run, or a batch's slice), noted with its Saltdeck user. With
 * several salt sources each master gets its own minions under the one jid (salt takes the jid it is given).
 */
export async function publishChecked(deps: AppDeps, client: SaltClient, username: string, minions: string[], req: Pick<RunRequest, 'fun' | 'arg' | 'kwarg'>, jid = newJid(deps.clock.now())) {
  // The job is noted with its Saltdeck user before salt publishes it: salt reports the salt-api account as its user.
  await markJob(deps, jid, { initiator: username })
  let answered: string | null = null
  const published: string[] = []
  for (const part of await partition(deps, client, minions)) {
    const r = await part.client.localAsync(part.minions, req.fun, { tgt_type: 'list', arg: req.arg, kwarg: req.kwarg, jid })
    if (!r?.jid) continue
    answered ??= String(r.jid)
    // salt-api's answer names the minions salt published to: their returns on the bus are believed (features/jobs/trust.ts).
    notePublished(deps, String(r.jid), req.fun, r.minions ?? [])
    published.push(...(r.minions ?? []))
  }
  if (answered === null) throw noMinions()
  return { jid: answered, minions: published }
}
