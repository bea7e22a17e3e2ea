/** State runs: recorded once per (minion, jid) from raw Salt returns; listed per minion. */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { countRun, runStatus, type RunStatus } from '../../salt/returns'
import { isTestRun, runDetail, slsOf } from '../../salt/states'
import { NotFound } from '../../lib/errors'
import { ensureMinionIn } from '../minions/service'
import { readDetail, storeDetail } from './detail'
import { sourceName } from '../salt-sources/schema'
import { dayOf, moveInTrend, recordFailures, statusBefore } from './health'
import { countRunOf, countRuns, insertRun, lastRealRunId, runBefore, runByJid, runPage, setLastRun, type MinionRunRow, type RunRow } from './store'

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
  /** The salt source the return came through; `default` when not given. */
  source?: string
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
 * In `tx` when the caller has a transaction open (the ingest's batch), else in one of its own.
 */
export async function recordRun(deps: AppDeps, raw: RawRun, tx?: Queryable): Promise<StoredRun | null> {
  const c = countRun(raw.ret)
  const status = runStatus(c)
  const completedAt = raw.stampMs ?? (raw.jobStartMs != null ? raw.jobStartMs + c.duration_ms : deps.clock.now())
  const detail = runDetail(raw.ret)
  const test = isTestRun(raw.args)
  const sls = slsOf(detail)
  const store = async (q: Queryable) => {
    await ensureMinionIn(deps, q, raw.minionId)
    const before = test ? null : await statusBefore(q, raw.minionId, endOfDay(completedAt))
    const id = newId()
    const stored = await insertRun(q, {
      id, minion_id: raw.minionId, jid: raw.jid, fun: raw.fun, completed_at: completedAt, pass_count: c.pass_count, fail_count: c.fail_count, change_count: c.change_count,
      total_count: c.total_count, duration_ms: c.duration_ms, blocked: c.blocked ? 1 : 0, status, test: test ? 1 : 0, sls: JSON.stringify(sls),
      source: raw.source ?? 'default',
    })
    if (!stored) return false
    await countRunOf(q, raw.minionId)
    if (detail && deps.config.runDetailKeep > 0) await storeDetail(deps, q, id, raw.minionId, detail, deps.config.runDetailKeep)
    if (test) return true
    await setLastRun(q, raw.minionId)
    const last = await lastRealRunId(q, raw.minionId)
    await moveInTrend(deps, q, raw.minionId, completedAt, before, await statusBefore(q, raw.minionId, endOfDay(completedAt)))
    if (detail?.states && last === id) await recordFailures(deps, q, raw.minionId, completedAt, detail.states, sls)
    return true
  }
  const stored = tx ? await store(tx) : await deps.db.tx(store)
  const failed = detail?.states?.filter((st) => st.result === false) ?? []
  return stored ? { minionId: raw.minionId, jid: raw.jid, fun: raw.fun, status, test, completedAt, failedStates: failed.slice(0, FAILED_KEPT).map((st) => st.id), failedTotal: failed.length } : null
}

/** A run as the API shows it. */
const runOut = (r: RunRow) => ({
  id: r.id, jid: r.jid, fun: r.fun, completed_at: iso(r.completed_at), pass_count: r.pass_count, fail_count: r.fail_count,
  change_count: r.change_count, total_count: r.total_count, duration_ms: r.duration_ms, blocked: r.blocked === 1, status: r.status as RunStatus,
  test: r.test === 1, sls: JSON.parse(r.sls) as string[], source: sourceName(r.source),
})

/** One minion's runs, newest first (completed_at, then jid), with the total for the filters (status, dry or real, salt source). */
export async function listRuns(deps: AppDeps, minionId: string, q: { limit: number; offset: number; status?: RunStatus; test?: boolean; source?: string }) {
  const f = { status: q.status, test: q.test, source: q.source }
  // Unfiltered totals come from the minion's run_count, kept in the same transaction as each insert.
  const total = await countRuns(deps.db, minionId, f)
  const rows = await runPage(deps.db, minionId, f, q.limit, q.offset)
  return { minion_id: minionId, total, runs: rows.map(runOut) }
}

/** One run of a minion; NotFound when there is none. */
async function runRow(deps: AppDeps, minionId: string, jid: string): Promise<MinionRunRow> {
  const r = await runByJid(deps.db, minionId, jid)
  if (!r) throw new NotFound('Run')
  return r
}

/** A run with its states (or errors) in Salt's order; `detail_pruned` once only its counts are kept. */
export async function runWithDetail(deps: AppDeps, minionId: string, jid: string) {
  const r = await runRow(deps, minionId, jid)
  const d = await readDetail(deps, r.id)
  return { minion_id: minionId, ...runOut(r), states: d?.states ?? null, errors: d?.errors ?? null, detail_pruned: d === null }
}

/** The run another is compared with: a jid, the minion's previous run, or its last good real run before it. */
async function againstRun(deps: AppDeps, r: RunRow, minionId: string, against: string): Promise<MinionRunRow> {
  if (against !== 'previous' && against !== 'last_good') return runRow(deps, minionId, against)
  const prev = await runBefore(deps.db, minionId, r.completed_at, r.jid, against === 'last_good')
  if (!prev) throw new NotFound('Run')
  return prev
}

/** The states whose outcome differs between two runs of a minion, and those in one run only. */
export async function runDiff(deps: AppDeps, minionId: string, jid: string, against: string) {
  const to = await runRow(deps, minionId, jid)
  const from = await againstRun(deps, to, minionId, against)
  const a = (await readDetail(deps, from.id))?.states
  const b = (await readDetail(deps, to.id))?.states
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
