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

/** A command as POST /api/run takes it. */
export interface RunRequest {
  tgt: string | string[]
  tgt_type: string
  fun: string
  arg: unknown[]
  kwarg: Record<string, unknown>
}

const noMinions = () => new NotFound('Minion', 'No minions matched the target')

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
  const minions = await expandTarget(client, req.tgt, req.tgt_type)
  if (!minions.length) throw noMinions()
  const refused = uncovered(grants, req.fun, minions)
  if (refused.length) throw new Forbidden(refusedOn(req.fun, refused))
  return minions
}

/** Publishes a job to checked minions as a list (a whole run, or a batch's slice), noted with its Saltdeck user. */
export async function publishChecked(deps: AppDeps, client: SaltClient, username: string, minions: string[], req: Pick<RunRequest, 'fun' | 'arg' | 'kwarg'>, jid = newJid(deps.clock.now())) {
  // The job is noted with its Saltdeck user before salt publishes it: salt reports the salt-api account as its user.
  await markJob(deps, jid, { initiator: username })
  const r = await client.localAsync(minions, req.fun, { tgt_type: 'list', arg: req.arg, kwarg: req.kwarg, jid })
  if (!r?.jid) throw noMinions()
  // salt-api's answer names the minions salt published to: their returns on the bus are believed (features/jobs/trust.ts).
  notePublished(deps, String(r.jid), req.fun, r.minions ?? [])
  return { jid: String(r.jid), minions: r.minions ?? [] }
}
