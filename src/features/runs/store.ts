/**
 * The runs' SQL: a run stored once per (minion, jid), the minion's run count and last run kept with it, the run list
 * and single runs. Everything runs on the Queryable it is handed (the ingest's transaction when storing).
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import type { Engine, Queryable } from '../../db/engine'
import { untilCommitBy } from '../../db/until-commit'
import type { Row } from '../../db/row'
import { minions, runs } from '../../db/schema'
import { sourceColumn } from '../salt-sources/store'

/** A run as the list and the detail read it. */
export type RunRow = Pick<Row<typeof runs>, 'id' | 'jid' | 'fun' | 'completed_at' | 'pass_count' | 'fail_count' | 'change_count' | 'total_count' | 'duration_ms' | 'blocked' | 'status' | 'test' | 'sls'> & {
  /** Null for the default source (salt-sources/store.ts sourceColumn). */
  source: string | null
}
/** A run with its minion. */
export type MinionRunRow = RunRow & Pick<Row<typeof runs>, 'minion_id'>

const LIST = sql`${runs.id}, ${runs.jid}, ${runs.fun}, ${runs.completedAt}, ${runs.passCount}, ${runs.failCount}, ${runs.changeCount}, ${runs.totalCount}, ${runs.durationMs}, ${runs.blocked}, ${runs.status}, ${runs.test}, ${runs.sls}, ${sourceColumn(runs.source)}`

/** Inserts a run unless the minion already has one of this jid; whether it was stored. */
export async function insertRun(q: Queryable, r: Row<typeof runs>): Promise<boolean> {
  const n = await q.exec(sql`INSERT INTO ${runs} (id, minion_id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status, test, sls, source)
    VALUES (${r.id}, ${r.minion_id}, ${r.jid}, ${r.fun}, ${r.completed_at}, ${r.pass_count}, ${r.fail_count}, ${r.change_count}, ${r.total_count}, ${r.duration_ms}, ${r.blocked},
      ${r.status}, ${r.test}, ${r.sls}, ${r.source}) ON CONFLICT (minion_id, jid) DO NOTHING`)
  return n > 0
}

/** Counts one more stored run of a minion (the run list's unfiltered total). */
export function countRunOf(q: Queryable, minionId: string): Promise<number> {
  return q.exec(sql`UPDATE ${minions} SET run_count = ${minions.runCount} + 1 WHERE ${minions.id} = ${minionId}`)
}

/** Sets a minion's last run to the head of its real runs (completed_at desc, then jid desc): one indexed lookup. */
export function setLastRun(q: Queryable, minionId: string): Promise<number> {
  return q.exec(sql`UPDATE ${minions} SET (last_run_status, last_run_completed_at) =
    (SELECT ${runs.status}, ${runs.completedAt} FROM ${runs} WHERE ${runs.minionId} = ${minionId} AND ${runs.test} = 0 ORDER BY ${runs.completedAt} DESC, ${runs.jid} DESC LIMIT 1)
    WHERE ${minions.id} = ${minionId}`)
}

/** The id of a minion's newest real run. */
export async function lastRealRunId(q: Queryable, minionId: string): Promise<string | undefined> {
  return (await q.row<Pick<Row<typeof runs>, 'id'>>(sql`SELECT ${runs.id} FROM ${runs} WHERE ${runs.minionId} = ${minionId} AND ${runs.test} = 0
    ORDER BY ${runs.completedAt} DESC, ${runs.jid} DESC LIMIT 1`))?.id
}

/** The run list's filters. */
export interface RunFilter {
  status?: string
  test?: boolean
  /** Only the runs whose return came through this salt source. */
  source?: string
}

/** Whether the filter asks for every run. */
const unfiltered = (f: RunFilter) => f.status === undefined && f.test === undefined && f.source === undefined

/** How many runs of a minion match the filter (a count only when filtered: unfiltered, the kept run_count). */
export async function countRuns(db: Engine, minionId: string, f: RunFilter): Promise<number> {
  if (unfiltered(f)) return keptRunCount(db, minionId)
  return (await db.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${runs} WHERE ${runFilter(minionId, f)}`))!.n
}

/** A minion's run_count, kept until the next commit. */
const keptRunCount = untilCommitBy(async (db, minionId: string) =>
  (await db.row<{ n: number }>(sql`SELECT ${minions.runCount} AS n FROM ${minions} WHERE ${minions.id} = ${minionId}`))?.n ?? 0)

/** The conditions of a minion's run list. */
function runFilter(minionId: string, f: RunFilter): SQL {
  // Unfiltered (the run list's usual call) one template, so the page's statement stays flat (db/render.ts).
  if (unfiltered(f)) return sql`${runs.minionId} = ${minionId}`
  const where = [sql`${runs.minionId} = ${minionId}`]
  if (f.status !== undefined) where.push(sql`${runs.status} = ${f.status}`)
  if (f.test !== undefined) where.push(sql`${runs.test} = ${f.test ? 1 : 0}`)
  if (f.source !== undefined) where.push(sql`${runs.source} = ${f.source}`)
  return sql.join(where, sql` AND `)
}

/** A page of a minion's runs, newest first (completed_at, then jid). */
export function runPage(q: Queryable, minionId: string, f: RunFilter, limit: number, offset: number): Promise<RunRow[]> {
  return q.rows(sql`SELECT ${LIST} FROM ${runs} WHERE ${runFilter(minionId, f)} ORDER BY ${runs.completedAt} DESC, ${runs.jid} DESC LIMIT ${limitOf(limit)} OFFSET ${offset}`)
}

/** One run of a minion by jid. */
export function runByJid(q: Queryable, minionId: string, jid: string): Promise<MinionRunRow | undefined> {
  return q.row(sql`SELECT ${runs.minionId}, ${LIST} FROM ${runs} WHERE ${runs.minionId} = ${minionId} AND ${runs.jid} = ${jid}`)
}

/** The minion's run just before (completed_at, jid) in the list's order; `good`: only real healthy or changed runs. */
export function runBefore(q: Queryable, minionId: string, completedAt: number, jid: string, good: boolean): Promise<MinionRunRow | undefined> {
  const only = good ? sql` AND ${runs.test} = 0 AND ${runs.status} IN ('healthy', 'changed')` : sql.empty()
  return q.row(sql`SELECT ${runs.minionId}, ${LIST} FROM ${runs} WHERE ${runs.minionId} = ${minionId}
    AND (${runs.completedAt} < ${completedAt} OR (${runs.completedAt} = ${completedAt} AND ${runs.jid} < ${jid}))${only}
    ORDER BY ${runs.completedAt} DESC, ${runs.jid} DESC LIMIT 1`)
}
