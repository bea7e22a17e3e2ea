/**
 * Fleet health over time, kept current as runs are stored (contract §13): the summary by each minion's last real
 * run, one trend point per UTC day (the counts as they stood at the end of that day; a backfilled run corrects the
 * days from its own on), and the states failing now. No request scans the runs.
 */
import type { AppDeps } from '../../deps'
import type { RunStatus } from '../../salt/returns'
import type { StateResult } from '../../salt/states'
import { iso } from '../../lib/clock'
import { identId, textId } from './detail'

const DAY_MS = 86_400_000
const STATUSES = ['healthy', 'changed', 'unhealthy', 'blocked'] as const
/** Trend points kept (days). */
const TREND_KEEP_DAYS = 400

/** The UTC day of a time, as YYYY-MM-DD. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`)

/** The status of a minion's last real run completed before `before` (epoch ms); null when none. */
export function statusBefore(deps: AppDeps, minionId: string, before: number): RunStatus | null {
  return deps.db.$client
    .query<{ status: RunStatus }, [string, number]>('SELECT status FROM runs WHERE minion_id = ?1 AND completed_at < ?2 AND test = 0 ORDER BY completed_at DESC, jid DESC LIMIT 1')
    .get(minionId, before)?.status ?? null
}

/** Makes sure a trend row exists for every day from `from` to `to`, each carrying the previous day's counts. */
function ensureDays(deps: AppDeps, from: string, to: string) {
  const db = deps.db.$client
  const have = new Set(db.query<{ day: string }, [string, string]>('SELECT day FROM run_trend WHERE day BETWEEN ?1 AND ?2').all(from, to).map((r) => r.day))
  for (let t = dayStart(from); t <= dayStart(to); t += DAY_MS) {
    const day = dayOf(t)
    if (have.has(day)) continue
    db.query(
      `INSERT INTO run_trend (day, healthy, changed, unhealthy, blocked)
       SELECT ?1, coalesce(max(healthy), 0), coalesce(max(changed), 0), coalesce(max(unhealthy), 0), coalesce(max(blocked), 0)
       FROM (SELECT * FROM run_trend WHERE day < ?1 ORDER BY day DESC LIMIT 1)`,
    ).run(day)
  }
}

/**
 * Moves one minion from `before` to `after` in the trend, for the days from the run's day until the day before the
 * minion's next real run (or today). Called with the statuses at the end of the run's day, before and after storing it.
 */
export function moveInTrend(deps: AppDeps, minionId: string, completedAt: number, before: RunStatus | null, after: RunStatus | null) {
  if (before === after) return
  const db = deps.db.$client
  const from = dayOf(completedAt)
  const today = dayOf(Math.max(deps.clock.now(), completedAt))
  const next = db
    .query<{ t: number }, [string, number]>('SELECT completed_at AS t FROM runs WHERE minion_id = ?1 AND completed_at >= ?2 AND test = 0 ORDER BY completed_at ASC LIMIT 1')
    .get(minionId, dayStart(from) + DAY_MS)?.t
  const until = next !== undefined ? dayOf(Math.min(dayStart(dayOf(next)) - DAY_MS, dayStart(today))) : today
  if (until < from) return
  ensureDays(deps, from, until)
  const set = [before ? `${before} = ${before} - 1` : null, after ? `${after} = ${after} + 1` : null].filter(Boolean).join(', ')
  db.query(`UPDATE run_trend SET ${set} WHERE day BETWEEN ?1 AND ?2`).run(from, until)
}

/** Drops trend points older than TREND_KEEP_DAYS (the retention poller calls it). */
export function pruneTrend(deps: AppDeps) {
  return deps.db.$client.query('DELETE FROM run_trend WHERE day < ?1').run(dayOf(deps.clock.now() - TREND_KEEP_DAYS * DAY_MS)).changes
}

/** Accepted minions by the status of their last real run, and those with none. */
export function runSummary(deps: AppDeps) {
  const by = { healthy: 0, changed: 0, unhealthy: 0, blocked: 0, never: 0 }
  let minions = 0
  for (const r of deps.db.$client.query<{ s: string | null; n: number }, []>("SELECT last_run_status AS s, count(*) AS n FROM minions WHERE key_state = 'accepted' GROUP BY last_run_status").all()) {
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
export function runTrend(deps: AppDeps, days: number) {
  const db = deps.db.$client
  const today = dayStart(dayOf(deps.clock.now()))
  const first = dayOf(today - (days - 1) * DAY_MS)
  const rows = new Map(db.query<Record<(typeof STATUSES)[number], number> & { day: string }, [string]>('SELECT * FROM run_trend WHERE day >= ?1').all(first).map((r) => [r.day, r]))
  let carry = db.query<Record<(typeof STATUSES)[number], number>, [string]>('SELECT healthy, changed, unhealthy, blocked FROM run_trend WHERE day < ?1 ORDER BY day DESC LIMIT 1').get(first) ?? { healthy: 0, changed: 0, unhealthy: 0, blocked: 0 }
  const minions = runSummary(deps).minions
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
export function recordFailures(deps: AppDeps, minionId: string, completedAt: number, states: StateResult[], sls: string[]) {
  const db = deps.db.$client
  const failed = states.filter((s) => s.result === false)
  const failedIds = failed.map((s) => identId(deps, s))
  for (const [i, s] of failed.entries())
    db.query(
      `INSERT INTO state_failures (ident_id, minion_id, failed_at, comment_id) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (ident_id, minion_id) DO UPDATE SET failed_at = excluded.failed_at, comment_id = excluded.comment_id`,
    ).run(failedIds[i]!, minionId, completedAt, textId(deps, s.comment))
  if (!sls.length) return
  db.query(
    `DELETE FROM state_failures WHERE minion_id = ?1 AND ident_id NOT IN (SELECT value FROM json_each(?2))
       AND ident_id IN (SELECT id FROM state_idents WHERE sls IN (SELECT value FROM json_each(?3)))`,
  ).run(minionId, JSON.stringify(failedIds), JSON.stringify(sls))
}

/** The states failing on the most minions, failed within the last `sinceMinutes` (all when absent). */
export function failingStates(deps: AppDeps, q: { since_minutes?: number; limit: number }) {
  const since = q.since_minutes ? deps.clock.now() - q.since_minutes * 60_000 : 0
  const rows = deps.db.$client
    .query<{ state_id: string; sls: string; function: string; minion_count: number; last: number; comment: string | null }, [number, number]>(
      `SELECT i.state_id, i.sls, i.function, f.minion_count, f.last,
         (SELECT t.text FROM state_failures g LEFT JOIN state_texts t ON t.id = g.comment_id WHERE g.ident_id = f.ident_id ORDER BY g.failed_at DESC LIMIT 1) AS comment
       FROM (SELECT ident_id, count(*) AS minion_count, max(failed_at) AS last FROM state_failures WHERE failed_at >= ?1 GROUP BY ident_id) f
       JOIN state_idents i ON i.id = f.ident_id
       ORDER BY f.minion_count DESC, f.last DESC LIMIT ?2`,
    )
    .all(since, q.limit)
  return { items: rows.map((r) => ({ id: r.state_id, sls: r.sls, function: r.function, minion_count: r.minion_count, last_failed_at: iso(r.last), sample_comment: r.comment ?? '' })) }
}
