/**
 * The confirm step: asks salt's job cache (runner jobs.list_job) about the returns held back from the event bus
 * (features/jobs/trust.ts) and stores the cache's own copy of those it holds. The runtime runs it every second while a
 * held return is due; each return is asked about on its own timetable (CONFIRM_AFTER_MS) and then given up.
 */
import type { AppDeps } from '../deps'
import type { SaltClient } from '../salt/client'
import { cachedJob } from '../salt/replies'
import { noFacts } from '../salt/facts'
import { applyFacts } from '../features/ingest/apply'
import { dueJids, heldOf, lookedUp } from '../features/jobs/trust'

/** Job cache lookups per step at most, so a minion firing forged returns cannot make Saltdeck flood salt-api. */
export const CONFIRM_BATCH = 10

/** One step: looks up the due jids; returns how many held returns the cache confirmed. */
export async function confirmHeldReturns(deps: AppDeps, client: SaltClient): Promise<number> {
  const now = deps.clock.now()
  let confirmed = 0
  for (const jid of dueJids(deps, now, CONFIRM_BATCH)) {
    try {
      const d = cachedJob(jid, await client.runner('jobs.list_job', { jid }), deps.clock.now())
      const held = heldOf(deps, jid)
      // Only the returns held: the cache's copy, not the event's. Nothing for a minion the cache has no return of.
      const returns = d?.returns.filter((r) => held.has(r.minionId)) ?? []
      if (d && returns.length) await applyFacts(deps, [{ ...noFacts(), jobs: [d.job], returns }])
      confirmed += returns.length
    } catch (e) {
      deps.log.warn('job cache lookup for held returns failed', { jid, error: (e as Error).message })
    }
    lookedUp(deps, jid, now)
  }
  return confirmed
}
