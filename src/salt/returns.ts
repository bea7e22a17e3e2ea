/** Parsing of raw Salt returns into run counts (contract §7). Pure functions: no database, no HTTP. */

/** The counts and flags of one state run. */
export interface RunCounts {
  pass_count: number
  fail_count: number
  change_count: number
  total_count: number
  duration_ms: number
  blocked: boolean
}

/** The four run statuses. */
export type RunStatus = 'healthy' | 'changed' | 'unhealthy' | 'blocked'
/** Every run status, in display order. */
export const RUN_STATUSES: RunStatus[] = ['healthy', 'changed', 'unhealthy', 'blocked']

const REFUSED = /is running as PID \d+/
const NO_RETURN = /^Minion did not return/

/**
 * True for the notice a minion returns when it queues a state run behind another (`queue=True`):
 * `{result: true, comment: "Job queued for execution", queued: true, __no_return__: true}`; the run's own return follows.
 */
export function isQueuedNotice(ret: unknown): boolean {
  return !!ret && typeof ret === 'object' && !Array.isArray(ret) && ((ret as Record<string, unknown>).__no_return__ === true || (ret as Record<string, unknown>).queued === true)
}

/** True for a state-result dict: an object whose keys use Salt's `_|-` separator. */
export function isStateDict(ret: unknown): ret is Record<string, unknown> {
  return !!ret && typeof ret === 'object' && !Array.isArray(ret) && Object.keys(ret).some((k) => k.includes('_|-'))
}

const nonEmpty = (v: unknown) => v !== null && v !== undefined && v !== '' && (typeof v !== 'object' || Object.keys(v as object).length > 0)

/** Counts one minion's return of a state function. */
export function countRun(ret: unknown): RunCounts {
  const zero = { pass_count: 0, fail_count: 0, change_count: 0, total_count: 0, duration_ms: 0, blocked: false }
  // A minion that did not answer (false on 3006/3007, a "Minion did not return" string on 3008) is blocked.
  if (ret === false || ret === null || ret === undefined) return { ...zero, blocked: true }
  if (typeof ret === 'string') {
    if (REFUSED.test(ret) || NO_RETURN.test(ret)) return { ...zero, blocked: true }
    return { ...zero, fail_count: 1, total_count: 1 }
  }
  if (Array.isArray(ret)) {
    if (ret.some((m) => typeof m === 'string' && REFUSED.test(m))) return { ...zero, blocked: true }
    const n = Math.max(1, ret.length)
    return { ...zero, fail_count: n, total_count: n }
  }
  if (typeof ret === 'object') {
    const c = { ...zero }
    let duration = 0
    for (const v of Object.values(ret as Record<string, unknown>)) {
      if (!v || typeof v !== 'object') continue
      const s = v as { result?: unknown; changes?: unknown; duration?: unknown }
      c.total_count++
      if (s.result === true) c.pass_count++
      else if (s.result === false) c.fail_count++
      if (nonEmpty(s.changes)) c.change_count++
      const d = typeof s.duration === 'number' ? s.duration : Number.parseFloat(String(s.duration ?? ''))
      if (Number.isFinite(d)) duration += d
    }
    c.duration_ms = Math.round(duration)
    return c
  }
  // Anything else (true, a number) is not a state result: count it as one failed message.
  return { ...zero, fail_count: 1, total_count: 1 }
}

/** The status of a run from its counts. */
export function runStatus(c: RunCounts): RunStatus {
  if (c.blocked) return 'blocked'
  if (c.fail_count > 0) return 'unhealthy'
  if (c.change_count > 0) return 'changed'
  return 'healthy'
}
