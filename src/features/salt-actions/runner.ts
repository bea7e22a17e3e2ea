/**
 * Runner jobs for a user (contract §16): `POST /api/run {client: "runner"}` checked against `execute runner:<fun>`,
 * started through salt-api's `runner_async`, indexed at once as a job of the caller, and followed in salt's job
 * cache until its return is there (runner jobs have no per-minion returns on the bus Saltdeck believes).
 */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { cachedRunnerReturn } from '../../salt/runners'
import { noFacts } from '../../salt/facts'
import { SaltRejected } from '../../salt/errors'
import { Forbidden } from '../../lib/errors'
import { applyFacts } from '../ingest/apply'
import { JOB_WAIT_MS, markJob } from '../jobs/service'
import { holds, scopedGrantsOf } from '../roles/service'

/** A runner call as POST /api/run takes it. */
export interface RunnerRequest {
  fun: string
  arg: unknown[]
  kwarg: Record<string, unknown>
}

/** Milliseconds between looks at salt's job cache for a runner's return: an orchestration takes seconds to minutes. */
export const FOLLOW_MS = 2_000

/** Failed looks in a row after which a runner job is no longer followed. */
const FAILURES = 5

/** The sentence of a refused runner. */
export const refusedRunner = (fun: string) => `Not allowed: runner ${fun}`

/** Checks `execute runner:<fun>` (on every minion), starts the runner, indexes its job with the caller as initiator and follows it. */
export async function runRunnerForUser(deps: AppDeps, client: SaltClient, user: { userId: string; username: string }, req: RunnerRequest, followMs = FOLLOW_MS) {
  // A runner acts from the master and can reach any minion (an orchestration targets what it likes): only a grant on
  // every minion (`target_glob` `*`) allows one.
  const fleetWide = (await scopedGrantsOf(deps, user.userId)).filter((g) => g.target_glob === '*')
  if (!holds(fleetWide, 'execute', `runner:${req.fun}`)) throw new Forbidden(refusedRunner(req.fun))
  const r = await client.runnerAsync(req.fun, req.arg, req.kwarg)
  if (!r?.jid) throw new SaltRejected('salt-api started no runner job', 502)
  const jid = String(r.jid)
  const now = deps.clock.now()
  // salt chooses a runner's jid itself: the mark goes in before the job is indexed, so the job is the caller's.
  await markJob(deps, jid, { initiator: user.username })
  const fun = `runner.${req.fun}`
  // As salt's job cache lists it: one list, keyword arguments as an object marked `__kwarg__`.
  const arg = Object.keys(req.kwarg).length ? [...req.arg, { ...req.kwarg, __kwarg__: true }] : req.arg
  await applyFacts(deps, [{ ...noFacts(), jobs: [{ jid, fun, target: null, tgtType: 'runner', user: null, arg, minions: null, startedAt: now, ts: now }] }])
  void followRunner(deps, client, jid, fun, arg, now, followMs)
  // A runner runs on default's master alone: no source is left out of it.
  return { jid, minions: [] as string[], skipped_sources: [] }
}

/** Looks in salt's job cache until the runner's return is there (or the job is given up on), then stores it. */
async function followRunner(deps: AppDeps, client: SaltClient, jid: string, fun: string, arg: unknown[], startedAt: number, followMs: number) {
  // Counted in looks, not by the clock: a job is given up on after JOB_WAIT_MS, and after FAILURES failed looks in a row
  // (salt-api gone, the service stopping), so no follower outlives its reason.
  for (let look = 0, failures = 0; look * followMs < JOB_WAIT_MS && failures < FAILURES; look++) {
    await Bun.sleep(followMs)
    try {
      const ret = cachedRunnerReturn(jid, fun, await client.runner('jobs.list_job', { jid }), deps.clock.now())
      failures = 0
      if (!ret) continue
      // The master answered for itself: the job expected that one return, so it no longer reads as running.
      const job = { jid, fun, target: null, tgtType: 'runner', user: null, arg, minions: [ret.minionId], startedAt, ts: startedAt }
      await applyFacts(deps, [{ ...noFacts(), jobs: [job], returns: [ret] }])
      return
    } catch (e) {
      failures++
      deps.log.warn('runner job lookup failed', { jid, error: (e as Error).message })
    }
  }
}
