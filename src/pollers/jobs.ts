/** The jobs and fleet pollers: sync the master's job cache and backfill returns the event stream missed. */
import type { Poller } from './scheduler'
import type { SaltRuntime } from '../salt/runtime'
import { dispatchSummary, noIntents, returnIntents, type Intents } from '../salt/normalize'
import { parseStartTime, jidTime } from '../lib/salt-time'
import { readSection } from '../features/settings/service'
import { runFunctions } from '../config'

/** Jobs older than this are not asked for missing returns again (a dead minion never answers). */
const BACKFILL_WINDOW_MS = 2 * 3600_000
const NOISE = /^(runner\.|wheel\.)|^saltutil\.find_job$|^saltutil\.running$/

interface CacheEntry {
  Function?: unknown
  Target?: unknown
  'Target-type'?: unknown
  User?: unknown
  StartTime?: unknown
  Arguments?: unknown
}

/** One sync of the job cache; with `onlyRuns` it looks at the state-run functions alone. */
export async function syncJobCache(rt: SaltRuntime, onlyRuns: boolean): Promise<number> {
  const runFuns = runFunctions(rt.deps.config)
  const list = ((await rt.client.runner('jobs.list_jobs')) ?? {}) as Record<string, CacheEntry>
  const db = rt.deps.db.$client
  const now = rt.deps.clock.now()
  const intents: Intents = noIntents()
  const candidates: string[] = []
  for (const [jid, j] of Object.entries(list)) {
    const fun = typeof j.Function === 'string' ? j.Function : null
    if (!fun || NOISE.test(fun) || (onlyRuns && !runFuns.has(fun))) continue
    const target = Array.isArray(j.Target) ? j.Target.join(',') : typeof j.Target === 'string' ? j.Target : null
    const startedAt = parseStartTime(j.StartTime) ?? jidTime(jid) ?? now
    const user = typeof j.User === 'string' ? j.User : null
    intents.jobs.push({ jid, fun, target, tgtType: typeof j['Target-type'] === 'string' ? j['Target-type'] : null, user, arg: j.Arguments ?? null, startedAt })
    const known = db.query<{ minions: string | null }, [string]>('SELECT minions FROM jobs WHERE jid = ?1').get(jid)
    const minions = known?.minions ? (JSON.parse(known.minions) as string[]) : null
    if (!known) intents.events.push({ ts: startedAt, category: 'job', event_type: 'job.new', jid, fun, target, initiator: user, summary: dispatchSummary(fun, target, minions?.length ?? 0) })
    const returned = db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM job_returns WHERE jid = ?1').get(jid)!.n
    if (now - startedAt <= BACKFILL_WINDOW_MS && (minions === null || returned < minions.length)) candidates.push(jid)
  }
  rt.ingest.apply([intents])
  let backfilled = 0
  for (const jid of candidates) {
    const d = (await rt.client.runner('jobs.list_job', { jid })) as { Function?: string; Minions?: string[]; Result?: Record<string, { return?: unknown; retcode?: number; success?: boolean }> }
    const fun = d?.Function
    if (!fun) continue
    const out = noIntents()
    const minions = Array.isArray(d.Minions) ? d.Minions.filter((m) => typeof m === 'string') : []
    out.jobs.push({ jid, fun, target: null, tgtType: null, user: null, minions, startedAt: jidTime(jid) ?? now })
    for (const [minionId, r] of Object.entries(d.Result ?? {})) {
      const have = db.query('SELECT 1 FROM job_returns WHERE jid = ?1 AND minion_id = ?2').get(jid, minionId)
      if (have) continue
      returnIntents(out, { jid, minionId, fun, ret: r?.return, retcode: typeof r?.retcode === 'number' ? r.retcode : null, success: typeof r?.success === 'boolean' ? r.success : null, ts: now, stampMs: null }, runFuns)
      backfilled++
    }
    rt.ingest.apply([out])
  }
  return backfilled
}

const setting = (rt: SaltRuntime, key: string) => Number(readSection(rt.deps, 'pollers')[key] ?? 0)

/** jobs: job index, job.new / job.ret backfill. */
export const jobsPoller = (rt: SaltRuntime): Poller => ({
  name: 'jobs',
  intervalSeconds: () => setting(rt, 'jobs_poll_interval_seconds'),
  initialDelaySeconds: () => setting(rt, 'minion_state_initial_delay_seconds'),
  tick: () => syncJobCache(rt, false),
})

/** fleet: the same job cache restricted to the run functions; state runs. */
export const fleetPoller = (rt: SaltRuntime): Poller => ({
  name: 'fleet',
  intervalSeconds: () => setting(rt, 'fleet_poll_interval_seconds'),
  initialDelaySeconds: () => setting(rt, 'minion_state_initial_delay_seconds'),
  tick: () => syncJobCache(rt, true),
})
