/** Salt's job facts into the job index, the returns and their activity events (job.new, job.ret). */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import type { JobReturned, JobStarted } from '../../salt/facts'
import { countRun, isStateDict } from '../../salt/returns'
import type { EventInput } from '../activity/service'
import { internalJids, jobOrigins, recordJobReturns, returnKey, upsertJobs } from './service'
import { putMark } from './store'
import { isPresencePing } from '../../salt/presence-ping'
import { isTestRun, slsArgs } from '../../salt/states'

/** A function with the state files it was asked for: `state.apply demo`, or the function alone. */
export const funLabel = (fun: string, args: unknown) => [fun, ...slsArgs(fun, args)].join(' ')

/** The summary of a job.new event; `minions` null when salt did not say whom the job went to (never "0 minions" then). */
export const dispatchSummary = (fun: string, target: string | null, minions: number | null) =>
  `${fun} dispatched to ${target ?? 'unknown target'} (${minions === null ? 'minions not known' : `${minions} minion${minions === 1 ? '' : 's'}`})`

/**
 * Summary counts and flags of a job return; `label` names the function as the summary shows it. A dry run (test=True)
 * changed nothing: it says so, its changes are what would change, and `changed` is false.
 */
export function describeReturn(minionId: string, fun: string, ret: unknown, runFuns: Set<string>, label = fun, dryRun = false) {
  const stateResult = isStateDict(ret)
  const c = countRun(ret)
  const changed = stateResult ? !dryRun && c.change_count > 0 : null
  const durationMs = stateResult && c.total_count > 0 ? c.duration_ms : null
  const what = dryRun ? `${label} (dry run)` : label
  const summary = runFuns.has(fun) && !c.blocked
    ? `${minionId} returned ${what}: ${c.pass_count} ok, ${c.fail_count} failed, ${c.change_count} ${dryRun ? 'would change' : 'changed'}`
    : `${minionId} returned ${what}`
  return { changed, durationMs, summary }
}

/**
 * Indexes jobs; a job.new event for each job not known before (a job seen on the stream and in the cache is one),
 * none for Saltdeck's own jobs. The initiator is the Saltdeck user who dispatched it, else salt's user. Runs on `tx`,
 * the ingest's transaction.
 */
export async function recordStartedJobs(tx: Queryable, deps: AppDeps, jobs: JobStarted[], out: EventInput[], source = 'default') {
  if (!jobs.length) return
  // manage.status publishes Saltdeck's presence ping under a jid of its own: known by its target, it is internal too.
  for (const j of jobs) if (isPresencePing(j)) await putMark(tx, j.jid, null, true, deps.clock.now())
  const fresh = new Set(await upsertJobs(tx, jobs, source))
  const internal = await internalJids(tx, jobs.map((j) => j.jid))
  const news = jobs.filter((j) => fresh.delete(j.jid) && !internal.has(j.jid))
  const origins = await jobOrigins(tx, news.map((j) => j.jid))
  for (const j of news) {
    const o = origins.get(j.jid)
    out.push({
      ts: j.ts, category: 'job', event_type: 'job.new', jid: j.jid, fun: j.fun, target: j.target, initiator: o?.user ?? j.user,
      summary: dispatchSummary(funLabel(j.fun, j.arg), j.target, j.minions?.length ?? null),
    })
  }
}

/**
 * Stores returns once per (jid, minion); a job.ret event for each new one, with its job's initiator and target.
 * Returns of Saltdeck's own jobs are neither stored nor shown: the features that asked keep what they need of them.
 * Runs on `tx`, the ingest's transaction.
 */
export async function recordReturnedJobs(tx: Queryable, _deps: AppDeps, all: JobReturned[], runFuns: Set<string>, out: EventInput[]): Promise<JobReturned[]> {
  if (!all.length) return []
  const internal = await internalJids(tx, all.map((r) => r.jid))
  const returns = internal.size ? all.filter((r) => !internal.has(r.jid)) : all
  const fresh = await recordJobReturns(tx, returns.map((r) => ({ jid: r.jid, minionId: r.minionId, success: success(r), retcode: r.retcode, ret: r.ret, receivedAt: r.ts })))
  const stored = returns.filter((r) => fresh.delete(returnKey(r.jid, r.minionId)))
  const origins = await jobOrigins(tx, stored.map((r) => r.jid))
  for (const r of stored) {
    const o = origins.get(r.jid)
    const args = r.funArgs ?? o?.arg
    const d = describeReturn(r.minionId, r.fun, r.ret, runFuns, funLabel(r.fun, args), isTestRun(args))
    out.push({
      ts: r.ts, category: 'job', event_type: 'job.ret', minion_id: r.minionId, jid: r.jid, fun: r.fun, success: success(r),
      changed: d.changed, duration_ms: d.durationMs, initiator: o?.user ?? null, target: o?.target ?? null, summary: d.summary,
    })
  }
  return stored
}

/** A return's success: `retcode == 0` when salt sent one, else its success flag. */
const success = (r: JobReturned) => (r.retcode !== null ? r.retcode === 0 : r.success)
