/**
 * Runner jobs in salt's terms: the master's job cache keeps a runner's return under the master's id as the whole
 * runner event (`{fun, jid, user, return, success}`, salt/client/mixins.py `store_job`), and an orchestration's
 * return names each step's own job as `__jid__` (salt/states/saltmod.py: `salt.state`, `salt.function`,
 * `salt.runner`, `salt.wheel`), the same on 3006, 3007 and 3008.
 */
import type { JobReturned } from './facts'
import { JID } from './normalize'

/** A runner job's return read from a `jobs.list_job` reply; null while the cache holds none. */
export function cachedRunnerReturn(jid: string, fun: string, reply: unknown, now: number): JobReturned | null {
  const result = (reply as { Result?: Record<string, { return?: unknown; success?: unknown; retcode?: unknown }> } | null)?.Result
  const first = result && Object.entries(result)[0]
  if (!first) return null
  const [minionId, entry] = first
  const env = entry?.return as { return?: unknown; success?: unknown; retcode?: unknown; jid?: unknown } | undefined
  // The cache's entry is the runner's event; older layouts put the runner's return there directly.
  const wrapped = !!env && typeof env === 'object' && 'return' in env && 'jid' in env
  const ret = wrapped ? env.return : env
  const success = wrapped && typeof env.success === 'boolean' ? env.success : typeof entry?.success === 'boolean' ? entry.success : null
  const inner = (ret as { retcode?: unknown } | null)?.retcode
  const retcode = typeof inner === 'number' ? inner : wrapped && typeof env.retcode === 'number' ? env.retcode : success === null ? null : success ? 0 : 1
  return { jid, minionId, fun, ret, retcode, success: retcode !== null ? retcode === 0 && success !== false : success, ts: now, stampMs: null }
}

/** One step of an orchestration and the job salt published for it. */
export interface ChildJob {
  jid: string
  /** The step's state id (`orch-demo`), null when the jid sat outside a state result. */
  step: string | null
}

/** The jobs an orchestration's return names (`__jid__` of each step), in the return's order, each once. */
export function childJobs(ret: unknown, limit = 1000): ChildJob[] {
  const out: ChildJob[] = []
  const seen = new Set<string>()
  const walk = (v: unknown, key: string | null, depth: number) => {
    if (!v || typeof v !== 'object' || depth > 8 || out.length >= limit) return
    if (Array.isArray(v)) return v.forEach((x) => walk(x, key, depth + 1))
    const o = v as Record<string, unknown>
    const j = o.__jid__
    if (typeof j === 'string' && JID.test(j) && !seen.has(j)) {
      seen.add(j)
      out.push({ jid: j, step: stepName(key, o) })
    }
    for (const [k, x] of Object.entries(o)) if (k !== '__jid__') walk(x, k, depth + 1)
  }
  walk(ret, null, 0)
  return out
}

/** A state result's id: its `__id__`, else the id part of the `mod_|-id_|-name_|-fun` key. */
function stepName(key: string | null, o: Record<string, unknown>): string | null {
  if (typeof o.__id__ === 'string') return o.__id__
  const parts = key?.split('_|-')
  return parts && parts.length === 4 ? parts[1]! : key
}
