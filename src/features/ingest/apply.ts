/**
 * Where salt facts land, from the event stream, the pollers and Saltdeck's own key actions alike: one transaction in
 * which each feature records its part (jobs and returns, runs, minion keys, presence and grains, the findings that
 * move with grains) and the activity events they make are stored; live subscribers hear of the events once they are
 * committed.
 */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import type { SaltFacts } from '../../salt/facts'
import { runFunctions } from '../../config'
import { jidTime } from '../../lib/salt-time'
import { isQueuedNotice } from '../../salt/returns'
import { recordEvents, type EventInput, type EventOut } from '../activity/service'
import { publishActivity } from '../activity/feed'
import { recordReturnedJobs, recordStartedJobs } from '../jobs/ingest'
import { jobArgs } from '../jobs/service'
import { recordRun, type StoredRun } from '../runs/service'
import { watchEvents, watchRuns } from '../alerts/watch'
import { noteMinionSources, recordGrains } from '../minions/service'
import { watchGrains } from '../vulns/watch'
import { recordKeyChanges, recordKeyFingerprints, recordKeyList, recordPresence, recordPresentList, recordStart } from '../minions/ingest'
import { confirmHeld, countHints, countRefusals, heldOf, notePublishedJobs, trustedReturns } from '../jobs/trust'
import { SCHEDULE_USER } from '../../salt/normalize'
import { internalJids, markScheduled } from '../jobs/service'
import type { JobReturned, JobStarted } from '../../salt/facts'

const runFunsOf = new WeakMap<AppDeps, Set<string>>()

/**
 * A job from salt's own replies that a held return claimed as its minion's schedule: labelled so when it targets that
 * minion alone (the claim only names the job; the cache says it exists).
 */
function scheduleLabel(deps: AppDeps, j: JobStarted): JobStarted {
  for (const h of heldOf(deps, j.jid).values())
    if (h.schedule && (j.target === h.minionId || (j.minions?.length === 1 && j.minions[0] === h.minionId)))
      return { ...j, user: SCHEDULE_USER, target: h.minionId, tgtType: 'list' }
  return j
}

/**
 * The returns of a batch that may be stored: all of salt's own replies (the job cache, written from authenticated
 * returns), and of the bus's claims only those of a job published to that minion (features/jobs/trust.ts).
 */
async function storableReturns(deps: AppDeps, tx: Queryable, batch: SaltFacts[]): Promise<JobReturned[]> {
  const out: JobReturned[] = []
  // Saltdeck's own jobs are never stored as returns: no need to hold or confirm theirs. Asked once for the whole batch
  // (a batch holds one fact per event, so asking per fact was a statement per return).
  const busJids = batch.flatMap((b) => (b.bus ? b.returns.map((r) => r.jid) : []))
  const internal = busJids.length ? await internalJids(tx, busJids) : new Set<string>()
  for (const b of batch) {
    if (b.bus) {
      for (const r of trustedReturns(deps, internal.size ? b.returns.filter((r) => !internal.has(r.jid)) : b.returns)) out.push(r)
      continue
    }
    // A held return the cache now confirms: its schedule claim names the job, if the job targets that minion alone.
    for (const r of b.returns) {
      const h = heldOf(deps, r.jid).get(r.minionId)
      if (h?.schedule) await markScheduled(tx, r.jid, r.minionId, SCHEDULE_USER)
      out.push(r)
    }
  }
  return out
}

/** The minions a batch shows a master knows: its stored returns, keys, presence, starts and grains (not a job's target list). */
function seenIds(batch: SaltFacts[], returns: JobReturned[]): string[] {
  const ids = new Set<string>(returns.map((r) => r.minionId))
  for (const b of batch) {
    for (const k of b.keys) ids.add(k.minionId)
    for (const k of b.keyList?.keys ?? []) ids.add(k.minionId)
    for (const p of b.presence) ids.add(p.minionId)
    for (const id of b.presentList?.ids ?? []) ids.add(id)
    for (const s of b.starts) ids.add(s.minionId)
    if (!b.bus) for (const g of b.grains ?? []) ids.add(g.id)
  }
  return [...ids]
}

/**
 * Records a batch of facts in one transaction (`tx`, handed to every part); returns the activity events stored.
 * `initiator`: the acting user.
 */
export async function applyFacts(deps: AppDeps, batch: SaltFacts[], initiator: string | null = null, source = 'default'): Promise<EventOut[]> {
  let runFuns = runFunsOf.get(deps)
  if (!runFuns) runFunsOf.set(deps, (runFuns = runFunctions(deps.config)))
  const funs = runFuns
  const stored = await deps.db.tx(async (tx) => {
    const events: EventInput[] = []
    for (const b of batch) {
      if (b.refused) countRefusals(deps, b.refused)
      if (b.hints) countHints(deps, b.hints)
    }
    const jobs = batch.flatMap((b) => (b.bus ? b.jobs : b.jobs.map((j) => scheduleLabel(deps, j))))
    notePublishedJobs(deps, jobs)
    await recordStartedJobs(tx, deps, jobs, events, source)
    const returns = await storableReturns(deps, tx, batch)
    const runs: StoredRun[] = []
    for (const r of returns) {
      if (!funs.has(r.fun) || isQueuedNotice(r.ret)) continue
      const run = await recordRun(deps, { minionId: r.minionId, jid: r.jid, fun: r.fun, ret: r.ret, stampMs: r.stampMs, jobStartMs: jidTime(r.jid), args: r.funArgs ?? (await jobArgs(tx, r.jid)), source }, tx)
      if (run) runs.push(run)
    }
    await recordReturnedJobs(tx, deps, returns, funs, events)
    await confirmHeld(deps, returns)
    for (const b of batch) {
      if (b.keyList) await recordKeyList(deps, tx, b.keyList, events, source)
      await recordKeyChanges(deps, tx, b.keys, initiator, events)
      if (b.keyFingerprints) await recordKeyFingerprints(deps, tx, b.keyFingerprints)
      for (const p of b.presence) await recordPresence(deps, tx, p.minionId, p.online, p.ts, events)
      if (b.presentList) await recordPresentList(deps, tx, b.presentList, events, source)
      for (const s of b.starts) await recordStart(deps, tx, s.minionId, s.ts, events)
    }
    // Grains are salt's own replies (a bus claim carries none): stored, then the findings of minions whose ecosystem moved.
    const grains = batch.flatMap((b) => (b.bus ? [] : (b.grains ?? [])))
    if (grains.length) {
      await recordGrains(deps, grains, tx)
      await watchGrains(deps, tx, grains.map((g) => g.id))
    }
    // Every minion this batch names through salt's own word or a trusted return was seen through this source.
    await noteMinionSources(deps, tx, seenIds(batch, returns), source)
    for (const e of events) e.source = source
    // A stable sort: events of one time keep the order in which they were made.
    events.sort((a, b) => a.ts - b.ts)
    const out = await recordEvents(deps, events, tx)
    // Alert rules judge the facts in the same transaction, so a transition and its outbox entry land with them.
    await watchRuns(tx, runs)
    await watchEvents(tx, out)
    return out
  })
  publishActivity(deps, stored)
  return stored
}
