/** State runs: recorded once per (minion, jid) from raw Salt returns; listed per minion. */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { countRun, runStatus, type RunStatus } from '../../salt/returns'
import { ensureMinion } from '../minions/service'

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
}

/** Parses and stores a run; a second return for the same (minion, jid) is ignored. Returns true when stored. */
export function recordRun(deps: AppDeps, raw: RawRun): boolean {
  const c = countRun(raw.ret)
  const status = runStatus(c)
  const completedAt = raw.stampMs ?? (raw.jobStartMs != null ? raw.jobStartMs + c.duration_ms : deps.clock.now())
  const db = deps.db.$client
  let stored = false
  db.transaction(() => {
    ensureMinion(deps, raw.minionId)
    const r = db.query(
      `INSERT INTO runs (id, minion_id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (minion_id, jid) DO NOTHING`,
    ).run(newId(), raw.minionId, raw.jid, raw.fun, completedAt, c.pass_count, c.fail_count, c.change_count, c.total_count, c.duration_ms, c.blocked ? 1 : 0, status)
    stored = r.changes > 0
    // The minion's last run is the head of its run list (completed_at desc, then jid desc): one indexed lookup.
    if (stored)
      db.query(
        `UPDATE minions SET run_count = run_count + 1, (last_run_status, last_run_completed_at) =
           (SELECT status, completed_at FROM runs WHERE minion_id = ?1 ORDER BY completed_at DESC, jid DESC LIMIT 1) WHERE id = ?1`,
      ).run(raw.minionId)
  })()
  return stored
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
}

const LIST = `SELECT id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status FROM runs`

/** One minion's runs, newest first (completed_at, then jid), with the total for the status filter. */
export function listRuns(deps: AppDeps, minionId: string, q: { limit: number; offset: number; status?: RunStatus }) {
  const db = deps.db.$client
  const byStatus = q.status !== undefined
  const where = byStatus ? 'WHERE minion_id = ?1 AND status = ?2' : 'WHERE minion_id = ?1'
  const args = byStatus ? [minionId, q.status!] : [minionId]
  // Unfiltered totals come from the minion's run_count, kept in the same transaction as each insert.
  const total = byStatus
    ? db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM runs ${where}`).get(...args)!.n
    : (db.query<{ n: number }, [string]>('SELECT run_count AS n FROM minions WHERE id = ?1').get(minionId)?.n ?? 0)
  const rows = db.query<RunRow, SQLQueryBindings[]>(`${LIST} ${where} ORDER BY completed_at DESC, jid DESC LIMIT ${q.limit} OFFSET ${q.offset}`).all(...args)
  return {
    minion_id: minionId,
    total,
    runs: rows.map((r) => ({
      id: r.id, jid: r.jid, fun: r.fun, completed_at: iso(r.completed_at), pass_count: r.pass_count, fail_count: r.fail_count,
      change_count: r.change_count, total_count: r.total_count, duration_ms: r.duration_ms, blocked: r.blocked === 1, status: r.status,
    })),
  }
}
