/**
 * Fleet health over time, kept current as runs are stored (contract §13): the summary by each minion's last real
 * run, one trend point per UTC day (the counts as they stood at the end of that day; a backfilled run corrects the
 * days from its own on), and the states failing now. No request scans the runs.
 */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import type { RunStatus } from '../../salt/returns'
import type { StateResult } from '../../salt/states'
import { iso } from '../../lib/clock'
import { identId, textId } from './detail'
import {
  addTrendDay, clearPassing, deleteTrendBefore, failingSince, firstRealRunFrom, lastStatusCounts, markFailing, moveTrend, statusOfLastBefore, trendBefore,
  trendDaysBetween, trendFrom,
} from './health-store'

const DAY_MS = 86_400_000
/** Trend points kept (days). */
const TREND_KEEP_DAYS = 400

/** The UTC day of a time, as YYYY-MM-DD. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`)

/** The status of a minion's last real run completed before `before` (epoch ms); null when none. */
export async function statusBefore(q: Queryable, minionId: string, before: number): Promise<RunStatus | null> {
  return ((await statusOfLastBefore(q, minionId, before)) as RunStatus | undefined) ?? null
}

/** Makes sure a trend row exists for every day from `from` to `to`, each carrying the previous day's counts. */
async function ensureDays(q: Queryable, from: string, to: string) {
  const have = new Set(await trendDaysBetween(q, from, to))
  for (let t = dayStart(from); t <= dayStart(to); t += DAY_MS) {
    const day = dayOf(t)
    if (!have.has(day)) await addTrendDay(q, day)
  }
}

/**
 * Moves one minion from `before` to `after` in the trend, for the days from the run's day until the day before the
 * minion's next real run (or today). Called with the statuses at the end of the run's day, before and after storing it.
 */
export async function moveInTrend(deps: AppDeps, q: Queryable, minionId: string, completedAt: number, before: RunStatus | null, after: RunStatus | null) {
  if (before === after) return
  const from = dayOf(completedAt)
  const today = dayOf(Math.max(deps.clock.now(), completedAt))
  const next = await firstRealRunFrom(q, minionId, dayStart(from) + DAY_MS)
  const until = next !== undefined ? dayOf(Math.min(dayStart(dayOf(next)) - DAY_MS, dayStart(today))) : today
  if (until < from) return
  await ensureDays(q, from, until)
  await moveTrend(q, before, after, from, until)
}

/** Drops trend points older than TREND_KEEP_DAYS (the retention poller calls it). */
export function pruneTrend(deps: AppDeps): Promise<number> {
  return deleteTrendBefore(deps.db, dayOf(deps.clock.now() - TREND_KEEP_DAYS * DAY_MS))
}

/** Accepted minions by the status of their last real run, and those with none. */
export async function runSummary(deps: AppDeps) {
  const by = { healthy: 0, changed: 0, unhealthy: 0, blocked: 0, never: 0 }
  let minions = 0
  for (const r of await lastStatusCounts(deps.db)) {
    minions += r.n
    if (r.s && r.s in by) by[r.s as keyof typeof by] += r.n
    else by.never += r.n
  }
  return { minions, by_status: by }
}

/**
 * One point per UTC day for the last `days` days (today included): minions by the status of their last real run at the
 * end of that day. `never` is today's accepted minions without such a run then (minions that joined later count there).
 */
export async function runTrend(deps: AppDeps, days: number) {
  const today = dayStart(dayOf(deps.clock.now()))
  const first = dayOf(today - (days - 1) * DAY_MS)
  const rows = new Map((await trendFrom(deps.db, first)).map((r) => [r.day, r]))
  let carry = (await trendBefore(deps.db, first)) ?? { healthy: 0, changed: 0, unhealthy: 0, blocked: 0 }
  const minions = (await runSummary(deps)).minions
  const points = []
  for (let t = dayStart(first); t <= today; t += DAY_MS) {
    const r = rows.get(dayOf(t))
    if (r) carry = r
    const counts = { healthy: carry.healthy, changed: carry.changed, unhealthy: carry.unhealthy, blocked: carry.blocked }
    const ran = counts.healthy + counts.changed + counts.unhealthy + counts.blocked
    points.push({ day: dayOf(t), ...counts, never: Math.max(0, minions - ran) })
  }
  return { days, points }
}

/**
 * Keeps the failing states of a minion current from its newest real run: a state it failed is (re)marked with the
 * run's time; a state of the same state files that did not fail is no longer failing on that minion.
 */
export async function recordFailures(deps: AppDeps, q: Queryable, minionId: string, completedAt: number, states: StateResult[], sls: string[]) {
  const failed = states.filter((s) => s.result === false)
  const failedIds: number[] = []
  for (const s of failed) failedIds.push(await identId(deps, q, s))
  for (const [i, s] of failed.entries()) await markFailing(q, failedIds[i]!, minionId, completedAt, await textId(deps, q, s.comment))
  if (!sls.length) return
  await clearPassing(q, minionId, failedIds, sls)
}

/** The states failing on the most minions, failed within the last `sinceMinutes` (all when absent). */
export async function failingStates(deps: AppDeps, q: { since_minutes?: number; limit: number }) {
  const since = q.since_minutes ? deps.clock.now() - q.since_minutes * 60_000 : 0
  const rows = await failingSince(deps.db, since, q.limit)
  return { items: rows.map((r) => ({ id: r.state_id, sls: r.sls, function: r.function, minion_count: r.minion_count, last_failed_at: iso(r.last), sample_comment: r.comment ?? '' })) }
}
