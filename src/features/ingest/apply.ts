/**
 * Where salt facts land, from the event stream, the pollers and Saltdeck's own key actions alike: one transaction in
 * which each feature records its part (jobs and returns, runs, minion keys and presence) and the activity events they
 * make are stored; live subscribers hear of the events once they are committed.
 */
import type { AppDeps } from '../../deps'
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
import { recordKeyChanges, recordKeyFingerprints, recordKeyList, recordPresence, recordPresentList, recordStart } from '../minions/ingest'

const runFunsOf = new WeakMap<AppDeps, Set<string>>()

/** Records a batch of facts in one transaction; returns the activity events stored. `initiator`: the acting user. */
export function applyFacts(deps: AppDeps, batch: SaltFacts[], initiator: string | null = null): EventOut[] {
  let runFuns = runFunsOf.get(deps)
  if (!runFuns) runFunsOf.set(deps, (runFuns = runFunctions(deps.config)))
  const db = deps.db.$client
  let stored: EventOut[] = []
  db.transaction(() => {
    const events: EventInput[] = []
    const returns = batch.flatMap((b) => b.returns)
    recordStartedJobs(deps, batch.flatMap((b) => b.jobs), events)
    const runs: StoredRun[] = []
    for (const r of returns) {
      if (!runFuns!.has(r.fun) || isQueuedNotice(r.ret)) continue
      const run = recordRun(deps, { minionId: r.minionId, jid: r.jid, fun: r.fun, ret: r.ret, stampMs: r.stampMs, jobStartMs: jidTime(r.jid), args: r.funArgs ?? jobArgs(deps, r.jid) })
      if (run) runs.push(run)
    }
    recordReturnedJobs(deps, returns, runFuns!, events)
    for (const b of batch) {
      if (b.keyList) recordKeyList(deps, b.keyList, events)
      recordKeyChanges(deps, b.keys, initiator, events)
      if (b.keyFingerprints) recordKeyFingerprints(deps, b.keyFingerprints)
      for (const p of b.presence) recordPresence(deps, p.minionId, p.online, p.ts, events)
      if (b.presentList) recordPresentList(deps, b.presentList, events)
      for (const s of b.starts) recordStart(deps, s.minionId, s.ts, events)
    }
    // A stable sort: events of one time keep the order in which they were made.
    events.sort((a, b) => a.ts - b.ts)
    stored = recordEvents(deps, events)
    // Alert rules judge the facts in the same transaction, so a transition and its outbox entry land with them.
    watchRuns(deps, runs)
    watchEvents(deps, stored)
  })()
  publishActivity(deps, stored)
  return stored
}
