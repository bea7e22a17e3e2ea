/**
 * The SQL of fleet health: the trend per UTC day (run_trend), the states failing now (state_failures), and the
 * lookups over runs and minions they are kept from. Everything runs on the Queryable it is handed.
 */
import { sql, limitOf } from '../../db/sql'
import { jsonRows } from '../../db/json-rows'
import { twin, type Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { minions, runs, runTrend, stateFailures, stateIdents, stateTexts } from '../../db/schema'

/** One day of the trend. */
export type TrendRow = Row<typeof runTrend>
/** The counts of a trend day. */
export type TrendCounts = Omit<TrendRow, 'day'>
/** A status column of the trend. */
export type TrendStatus = keyof TrendCounts

const COUNTS = sql`${runTrend.healthy}, ${runTrend.changed}, ${runTrend.unhealthy}, ${runTrend.blocked}`

/** The status of a minion's last real run completed before `before`. */
export async function statusOfLastBefore(q: Queryable, minionId: string, before: number): Promise<string | undefined> {
  return (await q.row<Pick<Row<typeof runs>, 'status'>>(sql`SELECT ${runs.status} FROM ${runs} WHERE ${runs.minionId} = ${minionId} AND ${runs.completedAt} < ${before}
    AND ${runs.test} = 0 ORDER BY ${runs.completedAt} DESC, ${runs.jid} DESC LIMIT 1`))?.status
}

/** The time of a minion's first real run completed at or after `from`. */
export async function firstRealRunFrom(q: Queryable, minionId: string, from: number): Promise<number | undefined> {
  return (await q.row<{ t: number }>(sql`SELECT ${runs.completedAt} AS t FROM ${runs} WHERE ${runs.minionId} = ${minionId} AND ${runs.completedAt} >= ${from}
    AND ${runs.test} = 0 ORDER BY ${runs.completedAt} ASC LIMIT 1`))?.t
}

/** The trend days stored from `from` to `to`. */
export async function trendDaysBetween(q: Queryable, from: string, to: string): Promise<string[]> {
  return (await q.rows<Pick<TrendRow, 'day'>>(sql`SELECT ${runTrend.day} FROM ${runTrend} WHERE ${runTrend.day} BETWEEN ${from} AND ${to}`)).map((r) => r.day)
}

/** Adds the trend day `day` with the counts of the latest day before it (zeros when none). */
export function addTrendDay(q: Queryable, day: string): Promise<number> {
  return q.exec(sql`INSERT INTO ${runTrend} (day, healthy, changed, unhealthy, blocked)
    SELECT ${day}, coalesce(max(p.healthy), 0), coalesce(max(p.changed), 0), coalesce(max(p.unhealthy), 0), coalesce(max(p.blocked), 0)
    FROM (SELECT ${COUNTS} FROM ${runTrend} WHERE ${runTrend.day} < ${day} ORDER BY ${runTrend.day} DESC LIMIT 1) AS p`)
}

/** Moves one minion from status `from` to `to` (either may be none) in the trend days `first` to `last`. */
export async function moveTrend(q: Queryable, from: TrendStatus | null, to: TrendStatus | null, first: string, last: string): Promise<void> {
  const col = (s: TrendStatus) => sql.identifier(runTrend[s].name)
  const set = [from ? sql`${col(from)} = ${runTrend[from]} - 1` : null, to ? sql`${col(to)} = ${runTrend[to]} + 1` : null].filter((x) => x !== null)
  if (!set.length) return
  await q.exec(sql`UPDATE ${runTrend} SET ${sql.join(set, sql`, `)} WHERE ${runTrend.day} BETWEEN ${first} AND ${last}`)
}

/** Deletes the trend days before `day`; how many went. */
export function deleteTrendBefore(q: Queryable, day: string): Promise<number> {
  return q.exec(sql`DELETE FROM ${runTrend} WHERE ${runTrend.day} < ${day}`)
}

/** Accepted minions by the status of their last real run (null: none). */
export function lastStatusCounts(q: Queryable): Promise<{ s: string | null; n: number }[]> {
  return q.rows(sql`SELECT ${minions.lastRunStatus} AS s, count(*) AS n FROM ${minions} WHERE ${minions.keyState} = 'accepted' GROUP BY ${minions.lastRunStatus}`)
}

/** The trend days from `first` on. */
export function trendFrom(q: Queryable, first: string): Promise<TrendRow[]> {
  return q.rows(sql`SELECT ${runTrend.day}, ${COUNTS} FROM ${runTrend} WHERE ${runTrend.day} >= ${first}`)
}

/** The counts of the latest trend day before `day`. */
export function trendBefore(q: Queryable, day: string): Promise<TrendCounts | undefined> {
  return q.row(sql`SELECT ${COUNTS} FROM ${runTrend} WHERE ${runTrend.day} < ${day} ORDER BY ${runTrend.day} DESC LIMIT 1`)
}

/** Marks a state failing on a minion since `failedAt`, with its comment. */
export function markFailing(q: Queryable, identId: number, minionId: string, failedAt: number, commentId: number): Promise<number> {
  return q.exec(sql`INSERT INTO ${stateFailures} (ident_id, minion_id, failed_at, comment_id) VALUES (${identId}, ${minionId}, ${failedAt}, ${commentId})
    ON CONFLICT (ident_id, minion_id) DO UPDATE SET failed_at = excluded.failed_at, comment_id = excluded.comment_id`)
}

/**
 * Clears the failures of a minion among the states of these state files that are not in `failedIds`. The lists go as
 * one JSON parameter each, so the statement's text (and SQLite's prepared statement) does not change with their length.
 */
export async function clearPassing(q: Queryable, minionId: string, failedIds: number[], sls: string[]): Promise<void> {
  const ids = jsonRows(failedIds)
  const files = jsonRows(sls)
  const [notFailed, inFiles] = twin(q, {
    sqlite: [sql`SELECT value FROM json_each(${ids})`, sql`SELECT value FROM json_each(${files})`],
    // ::text first: a parameter PostgreSQL types as jsonb is JSON-encoded again by the driver (a string, not a list).
    postgres: [sql`SELECT value::bigint FROM jsonb_array_elements_text(${ids}::text::jsonb) AS value`, sql`SELECT value FROM jsonb_array_elements_text(${files}::text::jsonb) AS value`],
  })
  await q.exec(sql`DELETE FROM ${stateFailures} WHERE ${stateFailures.minionId} = ${minionId} AND ${stateFailures.identId} NOT IN (${notFailed})
    AND ${stateFailures.identId} IN (SELECT ${stateIdents.id} FROM ${stateIdents} WHERE ${stateIdents.sls} IN (${inFiles}))`)
}

/** A failing state with how many minions fail it, when last, and a sample comment. */
export type FailingRow = Pick<Row<typeof stateIdents>, 'state_id' | 'sls' | 'function'> & { minion_count: number; last: number; comment: string | null }

/** The states failing on the most minions, failed at or after `since`. */
export function failingSince(q: Queryable, since: number, limit: number): Promise<FailingRow[]> {
  return q.rows(sql`SELECT i.state_id, i.sls, i.function, f.minion_count, f.last,
      (SELECT t.text FROM ${stateFailures} g LEFT JOIN ${stateTexts} t ON t.id = g.comment_id WHERE g.ident_id = f.ident_id ORDER BY g.failed_at DESC LIMIT 1) AS comment
    FROM (SELECT ident_id, count(*) AS minion_count, max(failed_at) AS last FROM ${stateFailures} WHERE failed_at >= ${since} GROUP BY ident_id) f
    JOIN ${stateIdents} i ON i.id = f.ident_id
    ORDER BY f.minion_count DESC, f.last DESC LIMIT ${limitOf(limit)}`)
}
