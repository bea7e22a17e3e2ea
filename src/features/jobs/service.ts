/** The job index and per-minion returns: written by the event stream and the jobs poller, read by the jobs API. */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import type { JobStarted } from '../../salt/facts'
import { slsArgs } from '../../salt/states'
import { splitArgs } from '../../salt/args'
import { newJid } from '../../lib/salt-time'
import { childJobs } from '../../salt/runners'

/** A job is no longer waited for once this old (a minion that is down never answers). */
export const JOB_WAIT_MS = 3600_000
/** Marks of jobs salt has not reported are dropped after this long. */
const MARK_KEEP_MS = 86_400_000

/** Notes before dispatch who started a job through Saltdeck, or that Saltdeck runs it for itself. */
export function markJob(deps: AppDeps, jid: string, mark: { initiator?: string | null; internal?: boolean }) {
  deps.db.$client
    .query('INSERT OR REPLACE INTO job_marks (jid, initiator, internal, created_at) VALUES (?1, ?2, ?3, ?4)')
    .run(jid, mark.initiator ?? null, mark.internal ? 1 : 0, deps.clock.now())
}

/** A new jid for a job Saltdeck runs for itself, noted as internal before salt reports it. */
export function internalJid(deps: AppDeps): string {
  const jid = newJid(deps.clock.now())
  markJob(deps, jid, { internal: true })
  return jid
}

/** Drops old job marks (the retention poller calls it). */
export function pruneJobMarks(deps: AppDeps) {
  return deps.db.$client.query('DELETE FROM job_marks WHERE created_at < ?1').run(deps.clock.now() - MARK_KEEP_MS).changes
}

/** Records that a job was killed through Saltdeck. */
export function markKilled(deps: AppDeps, jid: string, who: string) {
  deps.db.$client.query('UPDATE jobs SET killed_at = ?2, killed_by = ?3 WHERE jid = ?1').run(jid, deps.clock.now(), who)
}

/** Which of these jids are Saltdeck's own jobs (marked before dispatch). */
export function internalJids(deps: AppDeps, jids: Iterable<string>): Set<string> {
  const q = deps.db.$client.prepare<{ n: number }, [string]>('SELECT 1 AS n FROM job_marks WHERE jid = ?1 AND internal = 1')
  const out = new Set<string>()
  for (const j of new Set(jids)) if (q.get(j)) out.add(j)
  return out
}

/** A job as the stream (`salt/job/<jid>/new`) or the job cache describes it. */
export type JobInput = Omit<JobStarted, 'ts' | 'minions'> & { minions?: string[] | null }

/** Largest stored return value; bigger ones are cut (the raw return stays in salt's job cache). */
export const MAX_RETURN_CHARS = 64 * 1024

/** Inserts jobs not yet indexed and fills fields still unknown on known ones; returns the jids that were new. */
export function upsertJobs(deps: AppDeps, jobs: JobInput[]): string[] {
  const db = deps.db.$client
  const fresh: string[] = []
  // Who dispatched it through Saltdeck, or that Saltdeck runs it for itself, comes from the mark set before dispatch.
  const ins = db.prepare(`INSERT INTO jobs (jid, fun, target, tgt_type, user, arg, minions, started_at, initiator, internal)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, (SELECT initiator FROM job_marks WHERE jid = ?1), coalesce((SELECT internal FROM job_marks WHERE jid = ?1), 0))
    ON CONFLICT (jid) DO UPDATE SET fun = coalesce(jobs.fun, excluded.fun), target = coalesce(jobs.target, excluded.target),
      tgt_type = coalesce(jobs.tgt_type, excluded.tgt_type), user = coalesce(jobs.user, excluded.user), arg = coalesce(jobs.arg, excluded.arg),
      minions = coalesce(jobs.minions, excluded.minions)`)
  const exists = db.prepare<{ n: number }, [string]>('SELECT count(*) AS n FROM jobs WHERE jid = ?1')
  db.transaction(() => {
    for (const j of jobs) {
      const known = exists.get(j.jid)!.n > 0
      ins.run(j.jid, j.fun, j.target, j.tgtType, j.user, j.arg === undefined ? null : JSON.stringify(j.arg), j.minions ? JSON.stringify(j.minions) : null, j.startedAt)
      if (!known) fresh.push(j.jid)
    }
  })()
  return fresh
}

/** Names a job as a minion's own schedule (`user`), when it targets that minion alone or its target is unknown. */
export function markScheduled(deps: AppDeps, jid: string, minionId: string, user: string) {
  deps.db.$client
    .query("UPDATE jobs SET user = ?3, target = ?2, tgt_type = 'list' WHERE jid = ?1 AND (target = ?2 OR target IS NULL) AND user IS NOT ?3")
    .run(jid, minionId, user)
}

/** A job's arguments as stored (undefined when the job is unknown or salt did not say). */
export function jobArgs(deps: AppDeps, jid: string): unknown {
  const a = deps.db.$client.query<{ arg: string | null }, [string]>('SELECT arg FROM jobs WHERE jid = ?1').get(jid)?.arg
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

/** Stores returns once per (jid, minion); returns the `jid|minion` keys of those that were new. */
export function recordJobReturns(deps: AppDeps, rets: JobReturnInput[]): Set<string> {
  const db = deps.db.$client
  const ins = db.prepare(`INSERT INTO job_returns (jid, minion_id, success, retcode, ret, received_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
    ON CONFLICT (jid, minion_id) DO NOTHING`)
  const fresh = new Set<string>()
  db.transaction(() => {
    for (const r of rets) {
      let text = JSON.stringify(r.ret ?? null)
      if (text.length > MAX_RETURN_CHARS) text = JSON.stringify({ truncated: true, preview: text.slice(0, 1024) })
      if (ins.run(r.jid, r.minionId, r.success === null ? null : r.success ? 1 : 0, r.retcode, text, r.receivedAt).changes) fresh.add(returnKey(r.jid, r.minionId))
    }
  })()
  return fresh
}

/** A row of the jobs table. */
interface JobRow {
  jid: string
  fun: string | null
  target: string | null
  tgt_type: string | null
  user: string | null
  arg: string | null
  minions: string | null
  started_at: number
  initiator: string | null
  internal: number
  killed_at: number | null
  killed_by: string | null
  returned?: number
  failed?: number
}

/** A row of job_returns. */
interface ReturnRow {
  minion_id: string
  success: number | null
  retcode: number | null
  ret: string | null
  received_at: number
}

/**
 * The jids among these worth asking salt for missing returns: started within `windowMs` of `now`, and either with no
 * known minion list or with fewer returns stored than minions expected.
 */
export function jobsMissingReturns(deps: AppDeps, jids: { jid: string; startedAt: number }[], now: number, windowMs: number): string[] {
  const db = deps.db.$client
  const job = db.prepare<{ minions: string | null; internal: number; killed_at: number | null }, [string]>('SELECT minions, internal, killed_at FROM jobs WHERE jid = ?1')
  const returned = db.prepare<{ n: number }, [string]>('SELECT count(*) AS n FROM job_returns WHERE jid = ?1')
  return jids.filter((j) => {
    if (now - j.startedAt > windowMs) return false
    const row = job.get(j.jid)
    // Saltdeck's own jobs store their results elsewhere; a killed job answers no more.
    if (row?.internal || row?.killed_at) return false
    const m = row?.minions
    return !m || returned.get(j.jid)!.n < (JSON.parse(m) as string[]).length
  }).map((j) => j.jid)
}

/** The returns of a job already stored, by minion id. */
export function returnedMinions(deps: AppDeps, jid: string): Set<string> {
  return new Set(deps.db.$client.query<{ minion_id: string }, [string]>('SELECT minion_id FROM job_returns WHERE jid = ?1').all(jid).map((r) => r.minion_id))
}

const findJob = (deps: AppDeps, jid: string) => deps.db.$client.query<JobRow, [string]>('SELECT * FROM jobs WHERE jid = ?1').get(jid)

/** Who started a job (the Saltdeck user, else salt's user) and on what target, for the events of its returns; null when unknown. */
export function jobOrigin(deps: AppDeps, jid: string): { user: string | null; target: string | null; fun: string | null; arg: unknown } | null {
  const r = deps.db.$client.query<{ user: string | null; target: string | null; fun: string | null; arg: string | null }, [string]>('SELECT coalesce(initiator, user) AS user, target, fun, arg FROM jobs WHERE jid = ?1').get(jid)
  return r ? { ...r, arg: r.arg ? JSON.parse(r.arg) : undefined } : null
}

/** The minions a job was sent to (empty when unknown); NotFound when the job is not indexed. */
export function jobMinions(deps: AppDeps, jid: string): string[] {
  const j = findJob(deps, jid)
  if (!j) throw new NotFound('Job')
  return j.minions ? (JSON.parse(j.minions) as string[]) : []
}

/** What a job page says of a job: killed through Saltdeck (whatever answered after), still waited for, or finished. */
export type JobStatus = 'running' | 'finished' | 'killed'

/** A job's status: a kill wins, so a killed job never reads "finished". */
export const jobStatus = (killed: boolean, running: boolean): JobStatus => (killed ? 'killed' : running ? 'running' : 'finished')

function jobOut(deps: AppDeps, r: JobRow) {
  const arg = r.arg ? JSON.parse(r.arg) : null
  const minions = r.minions ? (JSON.parse(r.minions) as string[]) : null
  const returned = r.returned ?? 0
  // Waiting for returns: not killed, not all expected minions answered, and not given up on.
  const running = r.killed_at === null && (minions === null || returned < minions.length) && deps.clock.now() - r.started_at < JOB_WAIT_MS
  return {
    jid: r.jid, fun: r.fun, target: r.target, tgt_type: r.tgt_type, user: r.user, initiator: r.initiator ?? r.user, internal: r.internal === 1,
    started_at: iso(r.started_at), arg, ...splitArgs(arg), minions, returned, failed: r.failed ?? 0, sls: r.fun ? slsArgs(r.fun, arg) : [],
    killed_at: r.killed_at === null ? null : iso(r.killed_at), killed_by: r.killed_by,
    running, status: jobStatus(r.killed_at !== null, running),
  }
}

const COUNTS = `(SELECT count(*) FROM job_returns r WHERE r.jid = j.jid) AS returned, (SELECT count(*) FROM job_returns r WHERE r.jid = j.jid AND r.success = 0) AS failed`

/** Jobs newest first, filtered by function and user; Saltdeck's own jobs only when asked for. */
export function listJobs(deps: AppDeps, q: { fun?: string; user?: string; include_internal?: boolean; limit: number; offset: number }) {
  const where: string[] = []
  const args: string[] = []
  if (q.fun) where.push(`fun = ?${args.push(q.fun)}`)
  if (q.user) where.push(`coalesce(initiator, user) = ?${args.push(q.user)}`)
  if (!q.include_internal) where.push('internal = 0')
  const w = where.length ? `WHERE ${where.join(' AND ')}` : ''
  const db = deps.db.$client
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM jobs ${w}`).get(...args)!.n
  const rows = db.query<JobRow, SQLQueryBindings[]>(`SELECT j.*, ${COUNTS} FROM jobs j ${w} ORDER BY started_at DESC, jid DESC LIMIT ${q.limit} OFFSET ${q.offset}`).all(...args)
  return { total, jobs: rows.map((r) => jobOut(deps, r)) }
}

/** One job with its per-minion returns; 404 when unknown. */
export function jobDetail(deps: AppDeps, jid: string) {
  const j = findJob(deps, jid)
  if (!j) throw new NotFound('Job')
  const rets = deps.db.$client.query<ReturnRow, [string]>('SELECT minion_id, success, retcode, ret, received_at FROM job_returns WHERE jid = ?1 ORDER BY minion_id').all(jid)
  const returns = rets.map((r) => ({ minion_id: r.minion_id, success: r.success === null ? null : r.success === 1, retcode: r.retcode, return: JSON.parse(r.ret ?? 'null'), received_at: iso(r.received_at) }))
  return {
    ...jobOut(deps, { ...j, returned: rets.length, failed: rets.filter((r) => r.success === 0).length }),
    returns,
    children: j.fun?.startsWith('runner.') ? jobChildren(deps, returns.map((r) => r.return)) : [],
  }
}

/**
 * The jobs a runner's return names (an orchestration's steps, `__jid__` in salt's terms), each with its step and, once
 * Saltdeck has indexed it, its record: what ran where and its outcome.
 */
function jobChildren(deps: AppDeps, rets: unknown[]) {
  const row = deps.db.$client.prepare<JobRow, [string]>(`SELECT j.*, ${COUNTS} FROM jobs j WHERE j.jid = ?1`)
  return rets.flatMap((r) => childJobs(r)).map((c) => {
    const j = row.get(c.jid)
    return { jid: c.jid, step: c.step, job: j ? jobOut(deps, j) : null }
  })
}

/** The Saltdeck user who started a job (from the job or its mark); null when salt or another tool started it. */
export function jobInitiator(deps: AppDeps, jid: string): string | null {
  return deps.db.$client
    .query<{ u: string | null }, [string]>('SELECT coalesce((SELECT initiator FROM jobs WHERE jid = ?1), (SELECT initiator FROM job_marks WHERE jid = ?1)) AS u')
    .get(jid)?.u ?? null
}
