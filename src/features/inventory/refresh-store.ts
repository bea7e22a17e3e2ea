/** The SQL of `inventory_refreshes`: one row per inventory refresh, what it asked, what answered, how it ended. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { twin } from '../../db/engine'
import type { Row } from '../../db/row'
import { inventoryRefreshes as r } from '../../db/schema'

/** A refresh as stored. */
export type RefreshRow = Row<typeof r>

const COLUMNS = sql`${r.id}, ${r.startedAt}, ${r.finishedAt}, ${r.target}, ${r.minionsAsked}, ${r.minionsAnswered}, ${r.packagesStored}, ${r.error}`

/** Inserts a refresh row unless one is still open (inside the caller's transaction); whether it was inserted. */
export async function insertRefreshUnlessRunning(q: Queryable, id: string, startedAt: number, target: string): Promise<boolean> {
  if (await q.row(sql`SELECT 1 AS one FROM ${r} WHERE ${r.finishedAt} IS NULL`)) return false
  await q.exec(sql`INSERT INTO ${r} (id, started_at, target) VALUES (${id}, ${startedAt}, ${target})`)
  return true
}

/** When a refresh started (epoch ms); null for an unknown id. */
export async function refreshStart(q: Queryable, id: string): Promise<number | null> {
  return (await q.row<Pick<RefreshRow, 'started_at'>>(sql`SELECT ${r.startedAt} FROM ${r} WHERE ${r.id} = ${id}`))?.started_at ?? null
}

/** Sets a running refresh's counters. */
export async function setRefreshCounters(q: Queryable, id: string, p: { asked: number; answered: number; stored: number }) {
  await q.exec(sql`UPDATE ${r} SET minions_asked = ${p.asked}, minions_answered = ${p.answered}, packages_stored = ${p.stored} WHERE ${r.id} = ${id}`)
}

/** Marks a refresh finished at `at`, with its error text if it failed. */
export async function setRefreshFinished(q: Queryable, id: string, at: number, error: string | null) {
  await q.exec(sql`UPDATE ${r} SET finished_at = ${at}, error = ${error} WHERE ${r.id} = ${id}`)
}

/** Closes every open refresh as failed with `error`; returns how many. */
export async function closeOpenRefreshes(q: Queryable, at: number, error: string): Promise<number> {
  return q.exec(sql`UPDATE ${r} SET finished_at = ${at}, error = ${error} WHERE ${r.finishedAt} IS NULL`)
}

/**
 * The latest open refresh and the latest finished one. Ties on the time go to the row inserted last: SQLite's rowid;
 * PostgreSQL keeps no insertion order, so the row's physical position (ctid) stands in.
 */
export async function latestRefreshes(q: Queryable): Promise<{ current: RefreshRow | undefined; last: RefreshRow | undefined }> {
  const inserted = twin(q, { sqlite: sql.raw('rowid'), postgres: sql.raw('ctid') })
  const current = await q.row<RefreshRow>(sql`SELECT ${COLUMNS} FROM ${r} WHERE ${r.finishedAt} IS NULL ORDER BY ${r.startedAt} DESC, ${inserted} DESC LIMIT 1`)
  const last = await q.row<RefreshRow>(sql`SELECT ${COLUMNS} FROM ${r} WHERE ${r.finishedAt} IS NOT NULL ORDER BY ${r.finishedAt} DESC, ${inserted} DESC LIMIT 1`)
  return { current, last }
}
