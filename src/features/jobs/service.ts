/** The job index and per-minion returns: written by the event stream and the jobs poller, read by the jobs API. */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import type { JobStarted } from '../../salt/facts'
import { slsArgs } from '../../salt/states'
import { splitArgs } from '../../salt/args'
import { newJid } from '../../lib/salt-time'
import { childJobs } from '../../salt/runners'
import {
  countedJobRow, countJobs, initiatorOf, insertReturns, internalOf, jobArgText, jobOriginRow, jobOriginRows, jobPage, jobRow, jobWaitState, pruneMarks, putMark,
  jobSpanRow, returnCount, returnMinionIds, returnRows, setJobSpan, setKilled, setScheduled, upsertJob, upsertJobsPostgres, type CountedJobRow, type JobRow,
  type JobWrite,
} from './store'

/** A job is no longer waited for once this old (a minion that is down never answers). */
export const JOB_WAIT_MS = 3600_000
/** Marks of jobs salt has not reported are dropped after this long. */
const MARK_KEEP_MS = 86_400_000

/** Notes before dispatch who started a job through Saltdeck, or that Saltdeck runs it for itself. */
export async function markJob(deps: AppDeps, jid: string, mark: { initiator?: string | null; internal?: boolean }) {
  await putMark(deps.db, jid, mark.initiator ?? null, !!mark.internal, deps.clock.now())
}

/** A new jid for a job Saltdeck runs for itself, noted as internal before salt reports it. */
export async function internalJid(deps: AppDeps): Promise<string> {
  const jid = newJid(deps.clock.now())
  await markJob(deps, jid, { internal: true })
  return jid
}

/** Drops old job marks (the retention poller calls it); returns how many. */
export const pruneJobMarks = (deps: AppDeps) => pruneMarks(deps.db, deps.clock.now() - MARK_KEEP_MS)

/** Records that a job was killed through Saltdeck. */
export const markKilled = (deps: AppDeps, jid: string, who: string) => setKilled(deps.db, jid, deps.clock.now(), who)

/** Which of these jids are Saltdeck's own jobs (marked before dispatch); `q` is the database or the ingest's transaction. */
export function internalJids(q: Queryable, jids: Iterable<string>): Promise<Set<string>> {
  return internalOf(q, [...new Set(jids)])
}

/** A job as the stream (`salt/job/<jid>/new`) or the job cache describes it. */
export type JobInput = Omit<JobStarted, 'ts' | 'minions'> & { minions?: string[] | null }

/** Largest stored return value; bigger ones are cut (the raw return stays in salt's job cache). */
export const MAX_RETURN_CHARS = 64 * 1024

/**
 * Inserts jobs not yet indexed and fills fields still unknown on known ones; returns the jids that were new. Run it in
 * a transaction (the ingest's) so the jobs land together.
 */
export async function upsertJobs(q: Queryable, jobs: JobInput[], source = 'default'): Promise<string[]> {
  const rows = jobs.map((j): JobWrite => ({
    jid: j.jid, fun: j.fun, target: j.target, tgt_type: j.tgtType, user: j.user, arg: j.arg === undefined ? null : JSON.stringify(j.arg),
    minions: j.minions ? JSON.stringify(j.minions) : null, started_at: j.startedAt, source,
  }))
  if (q.engine === 'postgres') {
    const fresh: string[] = []
    const merged = mergeRepeats(rows)
    const stored = await upsertJobsPostgres(q, merged)
    for (const [i, r] of stored.entries()) {
      if (r.inserted) fresh.push(r.jid)
      else if (r.source !== source) await spanMasters(q, merged[i]!, r)
    }
    return fresh
  }
  // SQLite: a statement pair per job, in-process.
  const fresh: string[] = []
  for (const r of rows) {
    const known = (await jobSpanRow(q, r.jid)) !== undefined
    await upsertJob(q, r)
    if (!known) fresh.push(r.jid)
    // Read after the upsert: the stored row says whether another master reported the jid first (PostgreSQL's twin above
    // reads it from the upsert itself, which waited for a concurrent report's commit).
    const stored = (await jobSpanRow(q, r.jid))!
    if (stored.source !== source) await spanMasters(q, r, stored)
  }
  return fresh
}

/** One row per jid, as upserting them one after another leaves it: the first's fields, a later one's where those are null. */
function mergeRepeats(rows: JobWrite[]): JobWrite[] {
  const by = new Map<string, JobWrite>()
  for (const r of rows) {
    const seen = by.get(r.jid)
    if (!seen) by.set(r.jid, { ...r })
    else for (const k of ['fun', 'target', 'tgt_type', 'user', 'arg', 'minions'] as const) seen[k] ??= r[k]
  }
  return [...by.values()]
}

/**
 * A job Saltdeck published through several masters under one jid (contract §15: each master gets its own minions) is
 * reported by each with only its part: the job's minions are their union, and a list target too, so a job to `*`
 * over two masters lists every minion it went to. Reports of the source first seen only fill what is unknown.
 */
async function spanMasters(q: Queryable, j: JobWrite, before: { minions: string | null; target: string | null; tgt_type: string | null }) {
  const mine = j.minions ? (JSON.parse(j.minions) as string[]) : []
  if (!before.minions || !mine.length) return
  const had = JSON.parse(before.minions) as string[]
  const all = [...new Set([...had, ...mine])].sort()
  if (all.length === had.length) return
  const lists = before.tgt_type === 'list' && j.tgt_type === 'list' && before.target !== null && j.target
  const target = lists ? [...new Set([...before.target!.split(','), ...j.target!.split(',')])].sort().join(',') : null
  await setJobSpan(q, j.jid, JSON.stringify(all), target)
}

/** Names a job as a minion's own schedule (`user`), when it targets that minion alone or its target is unknown. */
export const markScheduled = (q: Queryable, jid: string, minionId: string, user: string) => setScheduled(q, jid, minionId, user)

/** A job's arguments as stored (undefined when the job is unknown or salt did not say). */
export async function jobArgs(q: Queryable, jid: string): Promise<unknown> {
  const a = await jobArgText(q, jid)
  return a ? JSON.parse(a) : undefined
}

/** One minion's return of a job. */
export interface JobReturnInput {
  jid: string
  minionId: string
  success: boolean | null
  retcode: number | null
  ret: unknown
  receivedAt: number
}

/** The key of one minion's return of a job. */
export const returnKey = (jid: string, minionId: string) => `${jid}|${minionId}`

/** Stores returns once per (jid, minion); returns the `jid|minion` keys of those that were new. Run it in a transaction. */
export function recordJobReturns(q: Queryable, rets: JobReturnInput[]): Promise<Set<string>> {
  const rows = rets.map((r) => {
    let text = JSON.stringify(r.ret ?? null)
    if (text.length > MAX_RETURN_CHARS) text = JSON.stringify({ truncated: true, preview: text.slice(0, 1024) })
    return { jid: r.jid, minion_id: r.minionId, success: r.success === null ? null : r.success ? 1 : 0, retcode: r.retcode, ret: text, received_at: r.receivedAt }
  })
  return insertReturns(q, rows, returnKey)
}

/**
 * The jids among these worth asking salt for missing returns: started within `windowMs` of `now`, and either with no
 * known minion list or with fewer returns stored than minions expected.
 */
export async function jobsMissingReturns(deps: AppDeps, jids: { jid: string; startedAt: number }[], now: number, windowMs: number): Promise<string[]> {
  const out: string[] = []
  for (const j of jids) {
    if (now - j.startedAt > windowMs) continue
    const row = await jobWaitState(deps.db, j.jid)
    // Saltdeck's own jobs store their results elsewhere; a killed job answers no more.
    if (row?.internal || row?.killed_at) continue
    const m = row?.minions
    if (!m || (await returnCount(deps.db, j.jid)) < (JSON.parse(m) as string[]).length) out.push(j.jid)
  }
  return out
}

/** The returns of a job already stored, by minion id. */
export const returnedMinions = async (deps: AppDeps, jid: string): Promise<Set<string>> => new Set(await returnMinionIds(deps.db, jid))

/** Who started a job (the Saltdeck user, else salt's user) and on what target, for the events of its returns; null when unknown. */
export async function jobOrigin(q: Queryable, jid: string): Promise<JobOrigin | null> {
  const r = await jobOriginRow(q, jid)
  return r ? originOf(r) : null
}

/** A job's origin as stored, its arguments parsed. */
const originOf = (r: { user: string | null; target: string | null; fun: string | null; arg: string | null }): JobOrigin => ({ ...r, arg: r.arg ? JSON.parse(r.arg) : undefined })

/** Who started a job and on what, as the events of its returns name it. */
export type JobOrigin = { user: string | null; target: string | null; fun: string | null; arg: unknown }

/** jobOrigin of many jobs at once (a statement per chunk on PostgreSQL); the unknown ones are left out. */
export async function jobOrigins(q: Queryable, jids: Iterable<string>): Promise<Map<string, JobOrigin>> {
  const rows = await jobOriginRows(q, [...new Set(jids)])
  return new Map([...rows].map(([jid, r]) => [jid, originOf(r)]))
}

/** The minions a job was sent to (empty when unknown) and the salt source it ran through; NotFound when the job is not indexed. */
export async function jobTarget(deps: AppDeps, jid: string): Promise<{ minions: string[]; source: string }> {
  const j = await jobRow(deps.db, jid)
  if (!j) throw new NotFound('Job')
  return { minions: j.minions ? (JSON.parse(j.minions) as string[]) : [], source: j.source }
}

/** What a job page says of a job: killed through Saltdeck (whatever answered after), still waited for, or finished. */
export type JobStatus = 'running' | 'finished' | 'killed'

/** A job's status: a kill wins, so a killed job never reads "finished". */
export const jobStatus = (killed: boolean, running: boolean): JobStatus => (killed ? 'killed' : running ? 'running' : 'finished')

function jobOut(deps: AppDeps, r: CountedJobRow) {
  const arg = r.arg ? JSON.parse(r.arg) : null
  const minions = r.minions ? (JSON.parse(r.minions) as string[]) : null
  const returned = r.returned
  // Waiting for returns: not killed, not all expected minions answered, and not given up on.
  const running = r.killed_at === null && (minions === null || returned < minions.length) && deps.clock.now() - r.started_at < JOB_WAIT_MS
  return {
    jid: r.jid, fun: r.fun, target: r.target, tgt_type: r.tgt_type, user: r.user, initiator: r.initiator ?? r.user, internal: r.internal === 1,
    started_at: iso(r.started_at), arg, ...splitArgs(arg), minions, returned, failed: r.failed, sls: r.fun ? slsArgs(r.fun, arg) : [],
    killed_at: r.killed_at === null ? null : iso(r.killed_at), killed_by: r.killed_by,
    running, status: jobStatus(r.killed_at !== null, running), source: r.source,
  }
}

/** Jobs newest first, filtered by function and user; Saltdeck's own jobs only when asked for. */
export async function listJobs(deps: AppDeps, q: { fun?: string; user?: string; source?: string; include_internal?: boolean; limit: number; offset: number }) {
  const f = { fun: q.fun, user: q.user, source: q.source, includeInternal: !!q.include_internal }
  const total = await countJobs(deps.db, f)
  const rows = await jobPage(deps.db, f, q.limit, q.offset)
  return { total, jobs: rows.map((r) => jobOut(deps, r)) }
}

/** One job with its per-minion returns; 404 when unknown. */
export async function jobDetail(deps: AppDeps, jid: string) {
  const j: JobRow | undefined = await jobRow(deps.db, jid)
  if (!j) throw new NotFound('Job')
  const rets = await returnRows(deps.db, jid)
  const returns = rets.map((r) => ({ minion_id: r.minion_id, success: r.success === null ? null : r.success === 1, retcode: r.retcode, return: JSON.parse(r.ret ?? 'null'), received_at: iso(r.received_at) }))
  return {
    ...jobOut(deps, { ...j, returned: rets.length, failed: rets.filter((r) => r.success === 0).length }),
    returns,
    children: j.fun?.startsWith('runner.') ? await jobChildren(deps, returns.map((r) => r.return)) : [],
  }
}

/**
 * The jobs a runner's return names (an orchestration's steps, `__jid__` in salt's terms), each with its step and, once
 * Saltdeck has indexed it, its record: what ran where and its outcome.
 */
async function jobChildren(deps: AppDeps, rets: unknown[]) {
  const out = []
  for (const c of rets.flatMap((r) => childJobs(r))) {
    const j = await countedJobRow(deps.db, c.jid)
    out.push({ jid: c.jid, step: c.step, job: j ? jobOut(deps, j) : null })
  }
  return out
}

/** The Saltdeck user who started a job (from the job or its mark); null when salt or another tool started it. */
export const jobInitiator = (deps: AppDeps, jid: string): Promise<string | null> => initiatorOf(deps.db, jid)
