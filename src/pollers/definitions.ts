/**
 * The pollers (contract §9), each a thin definition: its timing from the settings, and a tick that asks salt and hands
 * the facts to the feature that stores them.
 */
import type { AppDeps } from '../deps'
import type { SaltClient } from '../salt/client'
import { noFacts } from '../salt/facts'
import { cachedJob, cachedJobs, grainsOf, keyFingerprints, keyList, literalGlob, pingedIds, presentIds } from '../salt/replies'
import { manageStatusLies } from '../salt/versions'
import { isPresencePing, presenceStatusArgs } from '../salt/presence-ping'
import { runFunctions } from '../config'
import { applyFacts } from '../features/ingest/apply'
import { acceptedMinionIds, keysWithoutFingerprint } from '../features/minions/service'
import { internalJid, internalJids, jobsMissingReturns, pruneJobMarks, returnedMinions } from '../features/jobs/service'
import { pruneTrend } from '../features/runs/health'
import { watchTime } from '../features/alerts/watch'
import { groupTransitions, renotify } from '../features/alerts/notify'
import { fireDueSchedules } from '../features/templates/schedules'

/** How often the alert rules that depend on time are judged and the outbox is grouped. */
const ALERT_TICK_SECONDS = 5
/** How often due schedules are looked for: a firing happens within this many seconds of its time. */
const SCHEDULE_TICK_SECONDS = 5
import { pruneEvents } from '../features/activity/service'
import { presenceMethod, readSection } from '../features/settings/service'
import type { PollerSetting } from '../features/settings/schema'
import { startInventoryRefresh, type RefreshOptions } from '../features/inventory/refresh'
import type { Poller } from './scheduler'
import { CATCH_UP_SECONDS, type PresenceHold } from '../lib/poller-status'
import { SaltUnavailable } from '../salt/errors'
import { RefreshBusy } from '../lib/errors'

/** What the pollers use: the service's dependencies, the salt client, how an inventory refresh runs and the salt side's state. */
export interface PollerContext {
  deps: AppDeps
  /** The salt source these pollers read (what they store is marked with it). */
  source: string
  client: SaltClient
  inventory(): RefreshOptions
  /** Whether the event stream is wanted but not delivering (the jobs and fleet pollers then cover for it). */
  streamDown(): boolean
  /** The master's Salt version (asked once, then remembered until the salt settings change); null when unknown. */
  masterVersion(): Promise<string | null>
  /** What presence holds back because the master does not answer or answered again lately. */
  presenceHold(): PresenceHold
  /** How long a presence tick waits for salt (PRESENCE_DEADLINE_MS; tests shorten it). */
  presenceDeadlineMs(): number
}


/** Minions per grains call. */
export const GRAINS_BATCH = 200
/** Keys per wheel key.finger call. */
export const FINGER_BATCH = 500
/** The longest a presence tick waits for salt: a master that stopped must not hold it for the client's 3 × 30 s. */
export const PRESENCE_DEADLINE_MS = 30_000

/** `p`, or SaltUnavailable once `ms` have passed (the call is left to its own timeout). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new SaltUnavailable(`${what}: no answer within ${ms / 1000} s`)), ms)))
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/** How long the inventory poller waits for a running refresh to end before its tick fails as busy (a new minion's takes seconds; a stop waits for it too), and how often it looks. */
const BUSY_WAIT_MS = 60_000
const BUSY_RETRY_MS = 1_000
/** Jobs older than this are not asked for missing returns again (a dead minion never answers). */
const BACKFILL_WINDOW_MS = 2 * 3600_000

/** A poller setting's value (0 when unset: the poller is off); the key is typed, so a misspelt one does not compile. */
const setting = (c: PollerContext, key: PollerSetting) => Number(readSection(c.deps, 'pollers')[key] ?? 0)

/** A timed poller's traits: `catchUp` follows the stream's catch-up interval; `ownHold` handles a master known down itself; `asksMinions` asks minions, not only the master. */
interface TimedFlags {
  catchUp?: boolean
  ownHold?: boolean
  asksMinions?: boolean
}

/** A poller timed by two settings: its interval, and the initial delay it shares with the other minion-state pollers. */
const timed = (name: string, intervalKey: PollerSetting, delayKey: PollerSetting, tick: (c: PollerContext) => Promise<number>, flags: TimedFlags = {}) => (c: PollerContext): Poller => ({
  name,
  needsMaster: !flags.ownHold,
  asksMinions: flags.asksMinions,
  intervalSeconds: () => {
    const every = setting(c, intervalKey)
    // While the stream is down, events salt still holds in its job cache are fetched at a short interval instead.
    return flags.catchUp && c.streamDown() ? (every > 0 ? Math.min(every, CATCH_UP_SECONDS) : CATCH_UP_SECONDS) : every
  },
  initialDelaySeconds: () => setting(c, delayKey),
  tick: () => tick(c),
})

const FIRST_DELAY: PollerSetting = 'minion_state_initial_delay_seconds'

/** One sync of the job cache; with `onlyRuns` it looks at the state-run functions alone. Returns the returns backfilled. */
async function syncJobCache(c: PollerContext, onlyRuns: boolean): Promise<number> {
  const runFuns = runFunctions(c.deps.config)
  const now = c.deps.clock.now()
  const jobs = cachedJobs(await c.client.runner('jobs.list_jobs'), now, (fun) => !onlyRuns || runFuns.has(fun))
  // The jobs still waiting for returns (those new to the index too, Saltdeck's own left out) are read whole before any
  // is stored: jobs.list_jobs does not name the minions a job went to, jobs.list_job does, so a job.new read back from
  // the cache says how many.
  const internal = await internalJids(c.deps.db, jobs.map((j) => j.jid))
  const whole = new Map<string, NonNullable<ReturnType<typeof cachedJob>>>()
  for (const jid of await jobsMissingReturns(c.deps, jobs.filter((j) => !internal.has(j.jid) && !isPresencePing(j)), now, BACKFILL_WINDOW_MS)) {
    const d = cachedJob(jid, await c.client.runner('jobs.list_job', { jid }), now)
    if (d) whole.set(jid, d)
  }
  await applyFacts(c.deps, [{ ...noFacts(), jobs: jobs.map((j) => ({ ...j, minions: whole.get(j.jid)?.job.minions ?? j.minions })) }], null, c.source)
  let backfilled = 0
  for (const [jid, d] of whole) {
    const have = await returnedMinions(c.deps, jid)
    const returns = d.returns.filter((r) => !have.has(r.minionId))
    await applyFacts(c.deps, [{ ...noFacts(), jobs: [d.job], returns }], null, c.source)
    backfilled += returns.length
  }
  return backfilled
}

/**
 * The minions up now. `present`: runner manage.present (the master's connection table). `status`: runner
 * manage.status, except on the masters whose manage.status counts every targeted minion as up (3007.0–3008.2,
 * #69582): there a local test.ping, counting only the minions that answered `true`. Either ping is Saltdeck's own job:
 * the local one under a jid marked internal, manage.status's (its own jid) by the target it is given (presence-ping.ts).
 */
async function presentMinions(c: PollerContext): Promise<string[]> {
  if (presenceMethod(c.deps) !== 'status') return presentIds(await c.client.runner('manage.present'), false)
  if (manageStatusLies(await c.masterVersion())) return pingedIds(await c.client.local('*', 'test.ping', { timeout: 5, jid: await internalJid(c.deps) }))
  return presentIds(await c.client.runner('manage.status', presenceStatusArgs()), true)
}

/**
 * Reads the grains of these minions (local grains.items, GRAINS_BATCH at a time) and hands them to applyFacts, where
 * minions stores them and vulns re-counts those whose ecosystem moved; returns the ids that answered.
 */
export async function collectGrains(c: PollerContext, ids: string[]): Promise<string[]> {
  const answered: string[] = []
  for (let i = 0; i < ids.length; i += GRAINS_BATCH) {
    const batch = ids.slice(i, i + GRAINS_BATCH)
    const facts = grainsOf(await c.client.local(batch, 'grains.items', { tgt_type: 'list', jid: await internalJid(c.deps) }), batch)
    if (facts.length) await applyFacts(c.deps, [{ ...noFacts(), grains: facts }], null, c.source)
    answered.push(...facts.map((f) => f.id))
  }
  return answered
}

const POLLERS = {
  /**
   * keys: wheel key.list_all; key state per minion and key.* events on change. Then wheel key.finger for the keys with no
   * stored fingerprint (new ones, and those pending again), each id as a glob matching itself alone.
   */
  keys: timed('keys', 'minion_state_keys_interval_seconds', FIRST_DELAY, async (c) => {
    const list = keyList(await c.client.wheel('key.list_all'), c.deps.clock.now())
    await applyFacts(c.deps, [{ ...noFacts(), keyList: list }], null, c.source)
    const missing = await keysWithoutFingerprint(c.deps)
    for (let i = 0; i < missing.length; i += FINGER_BATCH) {
      const batch = missing.slice(i, i + FINGER_BATCH)
      const fps = keyFingerprints(await c.client.wheel('key.finger', { match: batch.map(literalGlob) }), batch)
      if (fps.length) await applyFacts(c.deps, [{ ...noFacts(), keyFingerprints: fps }], null, c.source)
    }
    return list.keys.length
  }),
  /**
   * presence: runner manage.present (or manage.status); online flags and minion.online/offline on change. Nothing while
   * the master does not answer (presence is unknown then); arrivals only in the grace after it answers again, while
   * its connection table fills (contract §17).
   */
  presence: timed('presence', 'minion_state_presence_interval_seconds', FIRST_DELAY, async (c) => {
    if (c.presenceHold() === 'down') return 0
    const ids = await within(presentMinions(c), c.presenceDeadlineMs(), 'presence')
    const ts = c.deps.clock.now()
    if (c.presenceHold() !== null) await applyFacts(c.deps, [{ ...noFacts(), presence: ids.map((minionId) => ({ minionId, online: true, ts })) }], null, c.source)
    else await applyFacts(c.deps, [{ ...noFacts(), presentList: { ids, ts } }], null, c.source)
    return ids.length
  }, { ownHold: true }),
  /**
   * grains: local grains.items in batches on the accepted keys salt reports now (read first, so a first tick that
   * runs before the keys poller's still finds the minions); grains and the summary columns. Not runner cache.grains:
   * 3008's split minion-data cache answers it empty after an upgrade until each minion re-syncs (#69775).
   */
  grains: timed('grains', 'minion_state_grains_interval_seconds', FIRST_DELAY, async (c) => {
    await applyFacts(c.deps, [{ ...noFacts(), keyList: keyList(await c.client.wheel('key.list_all'), c.deps.clock.now()) }], null, c.source)
    return (await collectGrains(c, await acceptedMinionIds(c.deps))).length
  }, { asksMinions: true }),
  /** jobs: job index, job.new / job.ret backfill. */
  jobs: timed('jobs', 'jobs_poll_interval_seconds', FIRST_DELAY, (c) => syncJobCache(c, false), { catchUp: true }),
  /** fleet: the same job cache restricted to the run functions; state runs. */
  fleet: timed('fleet', 'fleet_poll_interval_seconds', FIRST_DELAY, (c) => syncJobCache(c, true), { catchUp: true }),
  /** inventory: the periodic full refresh. */
  inventory: (c: PollerContext): Poller => ({
    name: 'inventory',
    needsMaster: true,
    asksMinions: true,
    intervalSeconds: () => setting(c, 'inventory_refresh_minutes') * 60,
    initialDelaySeconds: () => setting(c, 'inventory_refresh_initial_delay_s'),
    tick: async () => {
      // A refresh of a few newly accepted minions (newcomers.ts) may hold the one refresh slot for some seconds:
      // this tick waits for it rather than failing and leaving the fleet's packages for another interval (6 h).
      for (const until = Date.now() + BUSY_WAIT_MS; ;) {
        try {
          return await (await startInventoryRefresh(c.deps, c.inventory())).done
        } catch (e) {
          if (!(e instanceof RefreshBusy) || Date.now() >= until) throw e
          await Bun.sleep(BUSY_RETRY_MS)
        }
      }
    },
  }),
  /** alerts: the time-based rules, then the outbox grouped into notifications and re-sends of still-firing alerts. */
  alerts: (c: PollerContext): Poller => ({
    name: 'alerts',
    intervalSeconds: () => ALERT_TICK_SECONDS,
    initialDelaySeconds: () => ALERT_TICK_SECONDS,
    tick: async () => {
      await watchTime(c.deps)
      await renotify(c.deps)
      return await groupTransitions(c.deps, c.deps.config.alertGroupSeconds)
    },
  }),
  /** schedules: fires the schedules whose time has come (features/templates/schedules.ts keeps each firing once). */
  schedules: (c: PollerContext): Poller => ({
    name: 'schedules',
    intervalSeconds: () => SCHEDULE_TICK_SECONDS,
    initialDelaySeconds: () => SCHEDULE_TICK_SECONDS,
    tick: () => fireDueSchedules(c.deps, c.client),
  }),
  /** retention: deletes activity events older than event_stream_retention_days, at start and hourly. */
  retention: (c: PollerContext): Poller => ({
    name: 'retention',
    intervalSeconds: () => 3600,
    initialDelaySeconds: () => 0,
    tick: async () => {
      await pruneJobMarks(c.deps)
      await pruneTrend(c.deps)
      return pruneEvents(c.deps, setting(c, 'event_stream_retention_days') || 30)
    },
  }),
}

/** The poller names, in the order the pollers page lists them. */
export const POLLER_NAMES = Object.keys(POLLERS) as (keyof typeof POLLERS)[]

/** Every poller, bound to its context. */
export const definePollers = (c: PollerContext): Poller[] => Object.values(POLLERS).map((make) => make(c))
