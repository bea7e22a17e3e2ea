/**
 * The job index: the SQL of `jobs`, `job_marks` and `job_returns`. What a job means (its status, its children, which
 * returns are events) is in service.ts and ingest.ts. `user` is a reserved word in PostgreSQL: it is always written
 * quoted (`"user"`, or through the column).
 */
import type { SQL } from 'drizzle-orm'
import { jsonRows } from '../../db/json-rows'
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

/** Jids per statement on PostgreSQL (JSON row sets of a few hundred kilobytes at most). */
const JIDS_CHUNK = 1000

/** Which of these jids are marked Saltdeck's own. PostgreSQL: one statement per chunk (SQLite: a lookup each, in-process). */
export async function internalOf(q: Queryable, jids: string[]): Promise<Set<string>> {
  const out = new Set<string>()
  if (q.engine === 'sqlite') {
    for (const j of jids) if (await isInternal(q, j)) out.add(j)
    return out
  }
  for (let i = 0; i < jids.length; i += JIDS_CHUNK) {
    const json = jsonRows(jids.slice(i, i + JIDS_CHUNK))
    for (const r of await q.rows<{ jid: string }>(sql`SELECT ${jobMarks.jid} FROM ${jobMarks} WHERE ${jobMarks.internal} = 1
      AND ${jobMarks.jid} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`)) out.add(r.jid)
  }
  return out
}

/** A job's row after an upsert, as the ingest reads it: whether this statement inserted it, and what a span compares. */
export type UpsertedJob = Pick<JobRow, 'jid' | 'source' | 'minions' | 'target' | 'tgt_type'> & { inserted: boolean }

/**
 * Indexes jobs as upsertJob does each, in one statement per chunk (PostgreSQL); each row as stored after it, in the
 * order given, with whether this statement inserted it (`xmax = 0`: a row an ON CONFLICT updated has its updater's
 * id there). A report another instance stored first, committed while this one waited on its row, reads as updated, not
 * new. `rows` hold each jid once (the caller merges repeats: one statement may not update a row twice).
 */
export async function upsertJobsPostgres(q: Queryable, rows: JobWrite[]): Promise<UpsertedJob[]> {
  const out: UpsertedJob[] = []
  for (let i = 0; i < rows.length; i += JIDS_CHUNK) {
    const json = jsonRows(rows.slice(i, i + JIDS_CHUNK).map((r, n) => ({ ...r, n })))
    const got = await q.rows<UpsertedJob>(sql`WITH x AS (SELECT * FROM jsonb_to_recordset(${json}::text::jsonb) AS x(jid text, fun text, target text,
        tgt_type text, "user" text, arg text, minions text, started_at bigint, source text, n bigint)),
      up AS (INSERT INTO ${jobs} (jid, fun, target, tgt_type, "user", arg, minions, started_at, initiator, internal, source)
        SELECT x.jid, x.fun, x.target, x.tgt_type, x."user", x.arg, x.minions, x.started_at, m.initiator, coalesce(m.internal, 0), x.source
        FROM x LEFT JOIN ${jobMarks} m ON m.jid = x.jid ORDER BY x.n
        ON CONFLICT (jid) DO UPDATE SET fun = coalesce(${jobs.fun}, excluded.fun), target = coalesce(${jobs.target}, excluded.target),
          tgt_type = coalesce(${jobs.tgtType}, excluded.tgt_type), "user" = coalesce(${jobs.user}, excluded."user"), arg = coalesce(${jobs.arg}, excluded.arg),
          minions = coalesce(${jobs.minions}, excluded.minions)
        RETURNING ${jobs.jid}, ${jobs.source}, ${jobs.minions}, ${jobs.target}, ${jobs.tgtType}, (xmax = 0) AS inserted)
      SELECT up.* FROM up JOIN x ON x.jid = up.jid ORDER BY x.n`)
    for (const r of got) out.push({ ...r, inserted: !!r.inserted })
  }
  return out
}

/** Who started each of these jobs and on what (jobOriginRow for many): one statement per chunk on PostgreSQL. */
export async function jobOriginRows(q: Queryable, jids: string[]): Promise<Map<string, Pick<JobRow, 'user' | 'target' | 'fun' | 'arg'>>> {
  const out = new Map<string, Pick<JobRow, 'user' | 'target' | 'fun' | 'arg'>>()
  if (q.engine === 'sqlite') {
    for (const j of jids) {
      const r = await jobOriginRow(q, j)
      if (r) out.set(j, r)
    }
    return out
  }
  for (let i = 0; i < jids.length; i += JIDS_CHUNK) {
    const json = jsonRows(jids.slice(i, i + JIDS_CHUNK))
    const rows = await q.rows<Pick<JobRow, 'user' | 'target' | 'fun' | 'arg'> & { jid: string }>(sql`SELECT ${jobs.jid}, coalesce(${jobs.initiator}, ${jobs.user}) AS "user",
      ${jobs.target}, ${jobs.fun}, ${jobs.arg} FROM ${jobs} WHERE ${jobs.jid} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`)
    for (const { jid, ...r } of rows) out.set(jid, r)
  }
  return out
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

/** What widening a job seen through another master needs: the source it was first seen through, its minions and target. */
export const jobSpanRow = (q: Queryable, jid: string) =>
  q.row<Pick<JobRow, 'source' | 'minions' | 'target' | 'tgt_type'>>(sql`SELECT ${jobs.source}, ${jobs.minions}, ${jobs.target}, ${jobs.tgtType} FROM ${jobs} WHERE ${jobs.jid} = ${jid}`)

/** Sets the minions (and, when given, the target) of a job that one jid spans over several masters. */
export async function setJobSpan(q: Queryable, jid: string, minions: string, target: string | null) {
  await q.exec(sql`UPDATE ${jobs} SET minions = ${minions}, target = coalesce(${target}, ${jobs.target}) WHERE ${jobs.jid} = ${jid}`)
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

/** Returns per statement on PostgreSQL: a few megabytes of JSON at most (a return's text is capped by the caller). */
const RETURNS_CHUNK = 500

/**
 * Stores returns unless one of that minion for that job is stored; the `jid|minion` keys of those this call stored.
 * SQLite runs one prepared INSERT per return (in-process, no round trip); PostgreSQL takes them as JSON row sets, a
 * statement per chunk: a return per round trip held its ingest to about 1,500 events a second.
 */
export async function insertReturns(q: Queryable, rows: ReturnRow[], key: (jid: string, minionId: string) => string): Promise<Set<string>> {
  const fresh = new Set<string>()
  if (q.engine === 'sqlite') {
    for (const r of rows) if (await insertReturn(q, r)) fresh.add(key(r.jid, r.minion_id))
    return fresh
  }
  for (let i = 0; i < rows.length; i += RETURNS_CHUNK) {
    const json = jsonRows(rows.slice(i, i + RETURNS_CHUNK).map((r, n) => ({ ...r, n })))
    // ON CONFLICT DO NOTHING also skips a second row of one key within the chunk: in `n` order the first wins, as one by one.
    const stored = await q.rows<{ jid: string; minion_id: string }>(sql`INSERT INTO ${jobReturns} (jid, minion_id, success, retcode, ret, received_at)
      SELECT x.jid, x.minion_id, x.success, x.retcode, x.ret, x.received_at
      FROM jsonb_to_recordset(${json}::text::jsonb) AS x(jid text, minion_id text, success smallint, retcode bigint, ret text, received_at bigint, n bigint)
      ORDER BY x.n ON CONFLICT (jid, minion_id) DO NOTHING RETURNING jid, minion_id`)
    for (const r of stored) fresh.add(key(r.jid, r.minion_id))
  }
  return fresh
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
