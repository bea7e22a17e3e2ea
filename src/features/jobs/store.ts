/**
 * The job index: the SQL of `jobs`, `job_marks` and `job_returns`. What a job means (its status, its children, which
 * returns are events) is in service.ts and ingest.ts. `user` is a reserved word in PostgreSQL: it is always written
 * quoted (`"user"`, or through the column).
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { jobMarks, jobReturns, jobs } from '../../db/schema'

/** A job as stored. */
export type JobRow = Row<typeof jobs>
/** A job with how many minions returned it and how many of those failed. */
export type CountedJobRow = JobRow & { returned: number; failed: number }
/** One minion's return of a job as stored. */
export type ReturnRow = Row<typeof jobReturns>

/** Notes who dispatched a job (or that Saltdeck runs it), replacing an earlier mark. */
export async function putMark(q: Queryable, jid: string, initiator: string | null, internal: boolean, now: number) {
  await q.exec(sql`INSERT INTO ${jobMarks} (jid, initiator, internal, created_at) VALUES (${jid}, ${initiator}, ${internal ? 1 : 0}, ${now})
    ON CONFLICT (jid) DO UPDATE SET initiator = excluded.initiator, internal = excluded.internal, created_at = excluded.created_at`)
}

/** Drops the marks made before `before`; returns how many. */
export const pruneMarks = (q: Queryable, before: number) => q.exec(sql`DELETE FROM ${jobMarks} WHERE ${jobMarks.createdAt} < ${before}`)

/** Records that a job was killed, when and by whom. */
export async function setKilled(q: Queryable, jid: string, at: number, who: string) {
  await q.exec(sql`UPDATE ${jobs} SET killed_at = ${at}, killed_by = ${who} WHERE ${jobs.jid} = ${jid}`)
}

/** Whether a job is marked as Saltdeck's own. */
export async function isInternal(q: Queryable, jid: string): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS n FROM ${jobMarks} WHERE ${jobMarks.jid} = ${jid} AND ${jobMarks.internal} = 1`))
}

/** The source a job was first seen through and its stored minion list (JSON), when the job is indexed. */
export function jobSeen(q: Queryable, jid: string) {
  return q.row<Pick<JobRow, 'source' | 'minions'>>(sql`SELECT ${jobs.source}, ${jobs.minions} FROM ${jobs} WHERE ${jobs.jid} = ${jid}`)
}

/** Replaces a job's minion list (JSON): another master's share of the job joined it. */
export async function setJobMinions(q: Queryable, jid: string, minions: string) {
  await q.exec(sql`UPDATE ${jobs} SET minions = ${minions} WHERE ${jobs.jid} = ${jid}`)
}

/** A job as the stream or the job cache describes it, in stored form. */
export type JobWrite = Pick<JobRow, 'jid' | 'fun' | 'target' | 'tgt_type' | 'user' | 'arg' | 'minions' | 'started_at' | 'source'>

/**
 * Indexes a job, or fills the fields still unknown of a known one. Who dispatched it through Saltdeck, or that
 * Saltdeck runs it for itself, comes from the mark set before dispatch.
 */
export async function upsertJob(q: Queryable, j: JobWrite) {
  const mark = (col: SQL) => sql`(SELECT ${col} FROM ${jobMarks} WHERE ${jobMarks.jid} = ${j.jid})`
  // The source is the first one the job was seen through: a jid is one master's, and never changes hands.
  await q.exec(sql`INSERT INTO ${jobs} (jid, fun, target, tgt_type, "user", arg, minions, started_at, initiator, internal, source)
    VALUES (${j.jid}, ${j.fun}, ${j.target}, ${j.tgt_type}, ${j.user}, ${j.arg}, ${j.minions}, ${j.started_at}, ${mark(sql`${jobMarks.initiator}`)}, coalesce(${mark(sql`${jobMarks.internal}`)}, 0), ${j.source})
    ON CONFLICT (jid) DO UPDATE SET fun = coalesce(${jobs.fun}, excluded.fun), target = coalesce(${jobs.target}, excluded.target),
      tgt_type = coalesce(${jobs.tgtType}, excluded.tgt_type), "user" = coalesce(${jobs.user}, excluded."user"), arg = coalesce(${jobs.arg}, excluded.arg),
      minions = coalesce(${jobs.minions}, excluded.minions)`)
}

/** Names a job as a minion's own schedule (`user`), when it targets that minion alone or its target is unknown. */
export async function setScheduled(q: Queryable, jid: string, minionId: string, user: string) {
  await q.exec(sql`UPDATE ${jobs} SET "user" = ${user}, target = ${minionId}, tgt_type = 'list'
    WHERE ${jobs.jid} = ${jid} AND (${jobs.target} = ${minionId} OR ${jobs.target} IS NULL) AND ${jobs.user} IS DISTINCT FROM ${user}`)
}

/** A job's stored fields, or undefined when it is not indexed. */
export const jobRow = (q: Queryable, jid: string) => q.row<JobRow>(sql`SELECT * FROM ${jobs} WHERE ${jobs.jid} = ${jid}`)

/** A job's arguments as stored JSON (undefined when unknown, null when salt did not say). */
export async function jobArgText(q: Queryable, jid: string): Promise<string | null | undefined> {
  return (await q.row<Pick<JobRow, 'arg'>>(sql`SELECT ${jobs.arg} FROM ${jobs} WHERE ${jobs.jid} = ${jid}`))?.arg
}

/** What the backfill needs of a job: whom it went to, whether it is Saltdeck's own, whether it was killed. */
export const jobWaitState = (q: Queryable, jid: string) =>
  q.row<Pick<JobRow, 'minions' | 'internal' | 'killed_at'>>(sql`SELECT ${jobs.minions}, ${jobs.internal}, ${jobs.killedAt} FROM ${jobs} WHERE ${jobs.jid} = ${jid}`)

/** Who started a job (the Saltdeck user, else salt's user), its target, function and stored arguments. */
export const jobOriginRow = (q: Queryable, jid: string) =>
  q.row<Pick<JobRow, 'user' | 'target' | 'fun' | 'arg'>>(sql`SELECT coalesce(${jobs.initiator}, ${jobs.user}) AS "user", ${jobs.target}, ${jobs.fun}, ${jobs.arg} FROM ${jobs} WHERE ${jobs.jid} = ${jid}`)

/** The Saltdeck user who started a job, from the job or, before salt reported it, from its mark. */
export async function initiatorOf(q: Queryable, jid: string): Promise<string | null> {
  const r = await q.row<{ u: string | null }>(sql`SELECT coalesce((SELECT ${jobs.initiator} FROM ${jobs} WHERE ${jobs.jid} = ${jid}),
    (SELECT ${jobMarks.initiator} FROM ${jobMarks} WHERE ${jobMarks.jid} = ${jid})) AS u`)
  return r?.u ?? null
}

/** The returned and failed counts of the job of the row (correlated on `jobs.jid`). */
const COUNTS = sql`(SELECT count(*) FROM ${jobReturns} WHERE ${jobReturns.jid} = ${jobs.jid}) AS returned,
  (SELECT count(*) FROM ${jobReturns} WHERE ${jobReturns.jid} = ${jobs.jid} AND ${jobReturns.success} = 0) AS failed`

/** The filters of the jobs list. */
export interface JobFilter {
  fun?: string
  user?: string
  /** Only jobs seen through this salt source. */
  source?: string
  includeInternal: boolean
}

const where = (f: JobFilter) => {
  const w: SQL[] = []
  if (f.fun) w.push(sql`${jobs.fun} = ${f.fun}`)
  if (f.user) w.push(sql`coalesce(${jobs.initiator}, ${jobs.user}) = ${f.user}`)
  if (!f.includeInternal) w.push(sql`${jobs.internal} = 0`)
  // No stored source holds a NUL (PostgreSQL could not even take it as a parameter): such a filter matches nothing.
  if (f.source !== undefined) w.push(f.source.includes('\0') ? sql`1 = 0` : sql`${jobs.source} = ${f.source}`)
  return w.length ? sql`WHERE ${sql.join(w, sql` AND `)}` : sql.empty()
}

/** How many jobs match. */
export async function countJobs(q: Queryable, f: JobFilter): Promise<number> {
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${jobs} ${where(f)}`))!.n
}

/** A page of the matching jobs, newest first, with their counts. */
export const jobPage = (q: Queryable, f: JobFilter, limit: number, offset: number) =>
  q.rows<CountedJobRow>(sql`SELECT ${jobs}.*, ${COUNTS} FROM ${jobs} ${where(f)} ORDER BY ${jobs.startedAt} DESC, ${jobs.jid} DESC LIMIT ${limitOf(limit)} OFFSET ${offset}`)

/** One job with its counts, or undefined. */
export const countedJobRow = (q: Queryable, jid: string) =>
  q.row<CountedJobRow>(sql`SELECT ${jobs}.*, ${COUNTS} FROM ${jobs} WHERE ${jobs.jid} = ${jid}`)

/** Stores a return unless one of that minion for that job is stored; true when this call stored it. */
export async function insertReturn(q: Queryable, r: ReturnRow): Promise<boolean> {
  return (await q.exec(sql`INSERT INTO ${jobReturns} (jid, minion_id, success, retcode, ret, received_at)
    VALUES (${r.jid}, ${r.minion_id}, ${r.success}, ${r.retcode}, ${r.ret}, ${r.received_at}) ON CONFLICT (jid, minion_id) DO NOTHING`)) > 0
}

/** How many returns of a job are stored. */
export async function returnCount(q: Queryable, jid: string): Promise<number> {
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${jobReturns} WHERE ${jobReturns.jid} = ${jid}`))!.n
}

/** The minions whose returns of a job are stored. */
export async function returnMinionIds(q: Queryable, jid: string): Promise<string[]> {
  return (await q.rows<Pick<ReturnRow, 'minion_id'>>(sql`SELECT ${jobReturns.minionId} FROM ${jobReturns} WHERE ${jobReturns.jid} = ${jid}`)).map((r) => r.minion_id)
}

/** A job's returns whole, by minion id. */
export const returnRows = (q: Queryable, jid: string) =>
  q.rows<Omit<ReturnRow, 'jid'>>(sql`SELECT ${jobReturns.minionId}, ${jobReturns.success}, ${jobReturns.retcode}, ${jobReturns.ret}, ${jobReturns.receivedAt}
    FROM ${jobReturns} WHERE ${jobReturns.jid} = ${jid} ORDER BY ${jobReturns.minionId}`)

/** A job's returns, their outcome only. */
export const returnOutcomes = (q: Queryable, jid: string) =>
  q.rows<Pick<ReturnRow, 'minion_id' | 'success' | 'retcode'>>(sql`SELECT ${jobReturns.minionId}, ${jobReturns.success}, ${jobReturns.retcode} FROM ${jobReturns} WHERE ${jobReturns.jid} = ${jid}`)
