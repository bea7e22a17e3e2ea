/** State runs: recorded once per (minion, jid) from raw Salt returns; listed per minion. */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { countRun, runStatus, type RunStatus } from '../../salt/returns'
import { isTestRun, runDetail, slsOf } from '../../salt/states'
import { NotFound } from '../../lib/errors'
import { ensureMinion } from '../minions/service'
import { readDetail, storeDetail } from './detail'
import { dayOf, moveInTrend, recordFailures, statusBefore } from './health'

/** A raw state-function return as the event stream or job cache delivers it. */
export interface RawRun {
  minionId: string
  jid: string
  fun: string
  ret: unknown
  /** `_stamp` of the return event (epoch ms), if any. */
  stampMs?: number | null
  /** Start of the job (epoch ms), used with the duration when there is no stamp. */
  jobStartMs?: number | null
  /** The job's arguments (the return's fun_args, or the job's): test=True makes it a dry run. */
  args?: unknown
}

const endOfDay = (ms: number) => Date.parse(`${dayOf(ms)}T00:00:00Z`) + 86_400_000

/** A run just stored: what the features that react to runs (alerts) need of it. */
export interface StoredRun {
  minionId: string
  jid: string
  fun: string
  status: RunStatus
  test: boolean
  completedAt: number
  /** The ids of its failing states in run order (the first 20), and how many failed in all. */
  failedStates: string[]
  failedTotal: number
}

/** How many failing state ids a stored run carries for the alerts that name them. */
const FAILED_KEPT = 20

/**
 * Parses and stores a run once per (minion, jid): its counts, whether it was a dry run, its state files and detail;
 * a real run also moves the minion's last run, the fleet trend and its failing states. Returns the run when stored.
 */
export function recordRun(deps: AppDeps, raw: RawRun): StoredRun | null {
  const c = countRun(raw.ret)
  const status = runStatus(c)
  const completedAt = raw.stampMs ?? (raw.jobStartMs != null ? raw.jobStartMs + c.duration_ms : deps.clock.now())
  const detail = runDetail(raw.ret)
  const test = isTestRun(raw.args)
  const sls = slsOf(detail)
  const db = deps.db.$client
  let stored = false
  db.transaction(() => {
    ensureMinion(deps, raw.minionId)
    const before = test ? null : statusBefore(deps, raw.minionId, endOfDay(completedAt))
    const id = newId()
    const r = db.query(
      `INSERT INTO runs (id, minion_id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status, test, sls)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT (minion_id, jid) DO NOTHING`,
    ).run(id, raw.minionId, raw.jid, raw.fun, completedAt, c.pass_count, c.fail_count, c.change_count, c.total_count, c.duration_ms, c.blocked ? 1 : 0, status, test ? 1 : 0, JSON.stringify(sls))
    stored = r.changes > 0
    if (!stored) return
    db.query('UPDATE minions SET run_count = run_count + 1 WHERE id = ?1').run(raw.minionId)
    if (detail && deps.config.runDetailKeep > 0) storeDetail(deps, id, raw.minionId, detail, deps.config.runDetailKeep)
    if (test) return
    // The minion's last run is the head of its real runs (completed_at desc, then jid desc): one indexed lookup.
    db.query(
      `UPDATE minions SET (last_run_status, last_run_completed_at) =
         (SELECT status, completed_at FROM runs WHERE minion_id = ?1 AND test = 0 ORDER BY completed_at DESC, jid DESC LIMIT 1) WHERE id = ?1`,
    ).run(raw.minionId)
    const last = db.query<{ id: string }, [string]>('SELECT id FROM runs WHERE minion_id = ?1 AND test = 0 ORDER BY completed_at DESC, jid DESC LIMIT 1').get(raw.minionId)
    moveInTrend(deps, raw.minionId, completedAt, before, statusBefore(deps, raw.minionId, endOfDay(completedAt)))
    if (detail?.states && last?.id === id) recordFailures(deps, raw.minionId, completedAt, detail.states, sls)
  })()
  const failed = detail?.states?.filter((st) => st.result === false) ?? []
  return stored ? { minionId: raw.minionId, jid: raw.jid, fun: raw.fun, status, test, completedAt, failedStates: failed.slice(0, FAILED_KEPT).map((st) => st.id), failedTotal: failed.length } : null
}

/** A row of the run list (LIST). */
interface RunRow {
  id: string
  jid: string
  fun: string
  completed_at: number
  pass_count: number
  fail_count: number
  change_count: number
  total_count: number
  duration_ms: number
  blocked: number
  status: RunStatus
  test: number
  sls: string
}

const LIST = `SELECT id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status, test, sls FROM runs`

/** A run as the API shows it. */
const runOut = (r: RunRow) => ({
  id: r.id, jid: r.jid, fun: r.fun, completed_at: iso(r.completed_at), pass_count: r.pass_count, fail_count: r.fail_count,
  change_count: r.change_count, total_count: r.total_count, duration_ms: r.duration_ms, blocked: r.blocked === 1, status: r.status,
  test: r.test === 1, sls: JSON.parse(r.sls) as string[],
})

/** One minion's runs, newest first (completed_at, then jid), with the total for the filters (status, dry or real). */
export function listRuns(deps: AppDeps, minionId: string, q: { limit: number; offset: number; status?: RunStatus; test?: boolean }) {
  const db = deps.db.$client
  const where = ['minion_id = ?1']
  const args: SQLQueryBindings[] = [minionId]
  if (q.status !== undefined) where.push(`status = ?${args.push(q.status)}`)
  if (q.test !== undefined) where.push(`test = ?${args.push(q.test ? 1 : 0)}`)
  const w = `WHERE ${where.join(' AND ')}`
  // Unfiltered totals come from the minion's run_count, kept in the same transaction as each insert.
  const total = args.length > 1
    ? db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM runs ${w}`).get(...args)!.n
    : (db.query<{ n: number }, [string]>('SELECT run_count AS n FROM minions WHERE id = ?1').get(minionId)?.n ?? 0)
  const rows = db.query<RunRow, SQLQueryBindings[]>(`${LIST} ${w} ORDER BY completed_at DESC, jid DESC LIMIT ${q.limit} OFFSET ${q.offset}`).all(...args)
  return { minion_id: minionId, total, runs: rows.map(runOut) }
}

/** One run of a minion; NotFound when there is none. */
function runRow(deps: AppDeps, minionId: string, jid: string): RunRow & { minion_id: string } {
  const r = deps.db.$client.query<RunRow & { minion_id: string }, [string, string]>(`${LIST.replace('SELECT ', 'SELECT minion_id, ')} WHERE minion_id = ?1 AND jid = ?2`).get(minionId, jid)
  if (!r) throw new NotFound('Run')
  return r
}

/** A run with its states (or errors) in Salt's order; `detail_pruned` once only its counts are kept. */
export function runWithDetail(deps: AppDeps, minionId: string, jid: string) {
  const r = runRow(deps, minionId, jid)
  const d = readDetail(deps, r.id)
  return { minion_id: minionId, ...runOut(r), states: d?.states ?? null, errors: d?.errors ?? null, detail_pruned: d === null }
}

/** The run another is compared with: a jid, the minion's previous run, or its last good real run before it. */
function againstRun(deps: AppDeps, r: RunRow, minionId: string, against: string): RunRow & { minion_id: string } {
  if (against !== 'previous' && against !== 'last_good') return runRow(deps, minionId, against)
  const good = against === 'last_good' ? "AND test = 0 AND status IN ('healthy', 'changed')" : ''
  const prev = deps.db.$client
    .query<RunRow & { minion_id: string }, [string, number, string]>(
      `${LIST.replace('SELECT ', 'SELECT minion_id, ')} WHERE minion_id = ?1 AND (completed_at < ?2 OR (completed_at = ?2 AND jid < ?3)) ${good}
       ORDER BY completed_at DESC, jid DESC LIMIT 1`,
    )
    .get(minionId, r.completed_at, r.jid)
  if (!prev) throw new NotFound('Run')
  return prev
}

/** The states whose outcome differs between two runs of a minion, and those in one run only. */
export function runDiff(deps: AppDeps, minionId: string, jid: string, against: string) {
  const to = runRow(deps, minionId, jid)
  const from = againstRun(deps, to, minionId, against)
  const a = readDetail(deps, from.id)?.states
  const b = readDetail(deps, to.id)?.states
  const outcome = (s: { result: boolean | null; changed: boolean } | undefined) => (s ? { result: s.result, changed: s.changed } : null)
  const before = new Map((a ?? []).map((s) => [`${s.sls}\0${s.key}`, s]))
  const after = new Map((b ?? []).map((s) => [`${s.sls}\0${s.key}`, s]))
  const states = []
  for (const k of new Set([...after.keys(), ...before.keys()])) {
    const x = before.get(k)
    const y = after.get(k)
    if (x && y && x.result === y.result && x.changed === y.changed) continue
    const s = (y ?? x)!
    states.push({ key: s.key, id: s.id, sls: s.sls, before: outcome(x), after: outcome(y) })
  }
  return { from: { ...runOut(from), detail_pruned: a === undefined }, to: { ...runOut(to), detail_pruned: b === undefined }, states }
}
