/**
 * The salt side of a running service, composed: the salt client, the pollers on their scheduler and the event stream,
 * each handing salt facts to the features. Built and started by serve only (tests and CLI commands start no timers).
 */
import type { AppDeps, SaltSide } from './deps'
import { SaltClient, type ClientOptions } from './salt/client'
import { EventStream } from './salt/event-stream'
import type { Backoff } from './salt/events'
import { Scheduler } from './pollers/scheduler'
import { definePollers, PRESENCE_DEADLINE_MS } from './pollers/definitions'
import { versionOf } from './salt/replies'
import type { PresenceHold, SaltHealthSnapshot } from './lib/poller-status'
import { MasterWatch } from './salt/master'
import { applyFacts } from './features/ingest/apply'
import { presenceMethod, readSection, saltCredentials, settingsStatus } from './features/settings/service'
import type { SaltCreds } from './salt/client'
import type { SourceSide } from './deps'
import type { Hint } from './salt/facts'
import { refreshOptions, startInventoryRefresh } from './features/inventory/refresh'
import { closeAbandonedRefreshes, lastRefreshLostSalt } from './features/inventory/service'
import { confirmHeldReturns } from './pollers/confirm'
import { dueJids } from './features/jobs/trust'
import { onActivity } from './features/activity/feed'
import { Newcomers } from './pollers/newcomers'
import { advanceBatches } from './features/batches/service'
import { ROUTE_DEADLINE_MS } from './features/salt-actions/run'

/** How long a hint waits before its tick, so a burst of salt/auth or presence events makes one tick. */
export const HINT_DELAY_MS = 1000
/** The least time between two ticks a hint starts, so a minion firing hints in a loop cannot drive a poller faster. */
export const HINT_MIN_GAP_MS = 5000
/** How often the runtime looks for held returns due for a job cache lookup. */
const CONFIRM_EVERY_MS = 1000

/** How often the master is checked (a check waits up to MasterWatch's 15 s): a stop is seen within 30 s. */
const MASTER_CHECK_MS = 15_000
/** The grace after the master answers again, in presence intervals (contract §17). */
const GRACE_INTERVALS = 2

/** The pollers of fleet-wide work, run by the fleet leader (contract §15); every other poller is its salt source's. */
export const FLEET_POLLERS = ['retention']

/**
 * The pollers a salt source other than `default` runs: the salt ones (keys, presence, grains, jobs, fleet). The keys and
 * presence lists speak only for the minions no other source has seen (minions/ingest.ts). The inventory refresh, alert
 * ticks, schedules and retention are fleet-wide and run once, with `default`'s runtime.
 */
export const SOURCE_POLLERS = ['keys', 'presence', 'grains', 'jobs', 'fleet'] as const

/** How a runtime is built: tests shorten its timings; a source other than `default` names itself and its credentials. */
export interface RuntimeOptions {
  client?: Partial<ClientOptions>
  streamBackoff?: Backoff
  probeMs?: number
  masterCheckMs?: number
  masterTimeoutMs?: number
  /** The salt source this runtime reads; `default` (the salt settings section) unless given. */
  source?: string
  /** The source's connection with its password; `default` reads the salt settings section. */
  credentials?: () => SaltCreds
  /** Only these pollers, and none of the fleet-wide work (batches, held returns, newcomers): a source beyond `default`. */
  only?: readonly string[]
}

/** The salt side of one service: the `default` source's, which also does the fleet-wide work, or another source's. */
export class SaltRuntime implements SaltSide {
  readonly client: SaltClient
  /** The salt source it reads. */
  readonly source: string
  /** Whether it does the fleet-wide work too (the `default` source's runtime). */
  readonly fleetWide: boolean
  /** The other sources' running sides, kept by the registry (source-registry.ts). */
  others: () => SourceSide[] = () => []
  private credentials: () => SaltCreds
  readonly scheduler: Scheduler
  readonly stream: EventStream
  /** Whether inventory answers are read on a worker thread (tests turn it off to cover the main-thread reader). */
  inventoryWorker = true
  /** Minions per inventory batch (SALTDECK_INVENTORY_BATCH; tests make it small). */
  inventoryBatch: number
  /** How often salt-api is probed while it does not answer, so its return is noticed in seconds. */
  probeMs: number
  private master: { version: string | null; asked: Promise<string | null> | null } = { version: null, asked: null }
  private probing: ReturnType<typeof setInterval> | null = null
  private masterChecking: ReturnType<typeof setInterval> | null = null
  /** Whether the salt-master answers through salt-api. */
  readonly masterWatch: MasterWatch
  /** How long a presence tick waits for salt (tests shorten it). */
  presenceDeadlineMs = PRESENCE_DEADLINE_MS
  /** How long its master may take to match a job's target when there are several sources (tests shorten it). */
  routeDeadlineMs = ROUTE_DEADLINE_MS
  /** How often the master is checked while running (tests shorten it). */
  masterCheckMs: number
  private hinted = new Map<Hint, ReturnType<typeof setTimeout>>()
  private hintedAt = new Map<Hint, number>()
  private confirming: ReturnType<typeof setInterval> | null = null
  private confirmRun: Promise<unknown> | null = null
  /** Newly accepted minions being filled (grains, packages, vulnerabilities) at once. */
  readonly newcomers: Newcomers
  private unwatchKeys: (() => void) | null = null
  private batching: ReturnType<typeof setInterval> | null = null
  private batchRun: Promise<unknown> | null = null
  /** Whether the salt source's work runs here (lead). */
  private working = false
  /** Whether another instance leads the salt source (follow, unlead): the salt side then asks salt nothing on its own. */
  private follower = false

  constructor(readonly deps: AppDeps, opts: RuntimeOptions = {}) {
    this.source = opts.source ?? 'default'
    this.fleetWide = !opts.only
    this.credentials = opts.credentials ?? (() => saltCredentials(deps))
    this.client = new SaltClient(() => this.credentials(), { outboundAllow: deps.config.outboundAllow, ...opts.client }, () => deps.clock.now())
    this.inventoryBatch = deps.config.inventoryBatch
    this.probeMs = opts.probeMs ?? 2000
    this.masterCheckMs = opts.masterCheckMs ?? MASTER_CHECK_MS
    this.masterWatch = new MasterWatch(this.client, () => deps.clock.now(), opts.masterTimeoutMs)
    const context = {
      deps, source: this.source, client: this.client, inventory: () => this.inventoryOptions(),
      streamDown: () => this.stream.down, masterVersion: () => this.masterVersion(), presenceHold: () => this.presenceHold(),
      presenceDeadlineMs: () => this.presenceDeadlineMs,
    }
    const only = opts.only
    this.scheduler = new Scheduler({ clock: deps.clock, log: deps.log, masterDown: () => this.masterWatch.health().up === false }, definePollers(context).filter((p) => !only || only.includes(p.name)))
    this.newcomers = new Newcomers(context, (name) => this.scheduler.enabled(name))
    this.stream = new EventStream({
      client: this.client, clock: deps.clock, log: deps.log,
      // Presence from the bus is a hint (a presence tick, which keeps the master's hold), never a fact (contract §17).
      store: async (batch) => {
        await applyFacts(deps, batch, null, this.source)
        for (const f of batch) for (const h of f.hints ?? []) this.hint(h)
      },
      enabled: () => readSection(deps, 'pollers').event_stream_enabled === true,
    }, opts.streamBackoff)
    this.stream.onState = (state) => {
      // The jobs and fleet pollers cover for a stream that is down, and catch up once when it is back.
      this.scheduler.retime(['jobs', 'fleet'])
      if (state === 'reconnecting') void this.client.probe()
    }
  }

  /** The master's Salt version: runner salt.cmd test.version, asked once per salt connection; null when it fails. */
  masterVersion(): Promise<string | null> {
    if (this.master.version) return Promise.resolve(this.master.version)
    this.master.asked ??= this.client
      .runner('salt.cmd', { fun: 'test.version' })
      .then((r) => (this.master.version = versionOf(r)))
      .catch(() => null)
      .finally(() => (this.master.asked = null))
    return this.master.asked
  }

  /**
   * An event that only hints (salt/auth, salt/presence/*, a minion start): the keys or presence poller ticks soon, once
   * for a burst. With presence method `status` presence hints are ignored: each tick would be a ping job, and the
   * master's presence events match by address, which that method was chosen to avoid.
   */
  hint(kind: Hint) {
    if (this.hinted.has(kind)) return
    if (kind === 'presence' && presenceMethod(this.deps) === 'status') return
    // Real time, not the service's clock: this paces calls to salt-api.
    const wait = Math.max(HINT_DELAY_MS, (this.hintedAt.get(kind) ?? -Infinity) + HINT_MIN_GAP_MS - Date.now())
    this.hinted.set(kind, setTimeout(() => {
      this.hinted.delete(kind)
      this.hintedAt.set(kind, Date.now())
      if (!this.follower && this.scheduler.enabled(kind)) void this.scheduler.run(kind)
    }, wait))
  }

  /** Looks up held returns in the job cache when one is due (one step at a time). */
  private confirmHeld() {
    if (this.confirmRun || !dueJids(this.deps, this.deps.clock.now(), 1).length) return
    this.confirmRun = confirmHeldReturns(this.deps, this.client).finally(() => (this.confirmRun = null))
  }

  /** While salt-api does not answer, probes it; once it answers again (seen by any call), presence, keys and jobs run at once. */
  private watchReachability() {
    this.client.onReachChange = (up) => {
      if (!up) return
      this.deps.log.info('salt-api answers again')
      // The errors its absence caused clear now, and those pollers run again (not at their next tick, up to hours away).
      this.scheduler.saltAnswers()
      void this.masterWatch.check()
      // Only the source's leader asks salt on the pollers' behalf (contract §15).
      if (this.follower) return
      for (const name of ['presence', 'keys', 'jobs']) if (this.scheduler.enabled(name)) void this.scheduler.run(name)
      // A refresh salt-api's absence broke is run again now, rather than its error and stale packages staying for hours.
      if (this.scheduler.enabled('inventory'))
        void lastRefreshLostSalt(this.deps).then(
          (lost) => void (lost && this.scheduler.run('inventory')),
          (e) => this.deps.log.warn('inventory refresh status unreadable', { error: String(e) }),
        )
    }
    this.probing ??= setInterval(() => {
      if (this.client.reachability().up === false) void this.client.probe()
    }, this.probeMs)
  }

  /**
   * Whether the master holds presence back: `down` while it does not answer, `grace` for two presence intervals after it
   * answers again (at least two minutes when the presence poller is off: the stream's presence events fill as slowly).
   */
  presenceHold(): PresenceHold {
    const m = this.masterWatch.health()
    if (m.up === false) return 'down'
    const until = this.graceUntil()
    return until !== null && this.deps.clock.now() < until ? 'grace' : null
  }

  private graceUntil(): number | null {
    const back = this.masterWatch.health().backAt
    if (back === null) return null
    const every = Number(readSection(this.deps, 'pollers').minion_state_presence_interval_seconds ?? 0) || 60
    return back + GRACE_INTERVALS * every * 1000
  }

  /**
   * Reacts to key events once stored, wherever they came from (the keys poller's diff, salt/key on the stream, a key
   * action through Saltdeck): an accepted key's minion is filled at once, and a pending key's fingerprint is read now
   * by a keys tick rather than at the next one (5 minutes by default).
   */
  watchKeys() {
    this.unwatchKeys ??= onActivity(this.deps, (events) => {
      const accepted = events.filter((e) => e.event_type === 'key.accept' && e.minion_id).map((e) => e.minion_id!)
      if (accepted.length) this.newcomers.add(accepted)
      if (events.some((e) => e.event_type === 'key.pend') && this.scheduler.enabled('keys')) void this.scheduler.run('keys')
    })
  }

  /** Whether the stored online flags are current: salt-api answered at its last exchange and the master holds nothing back. */
  presenceKnown() {
    return (this.client.reachability().up !== false || this.stream.state === 'connected') && this.presenceHold() === null
  }

  /** Watches the master: a check now and every masterCheckMs; once it answers again, presence, jobs and the pollers that skipped ticks run (those asking minions after the grace). */
  private watchMaster() {
    this.masterWatch.onChange = (up) => {
      if (!up) {
        const m = this.masterWatch.health()
        this.deps.log.warn('salt-master does not answer (salt-api does): presence is unknown and nobody goes offline until it does', { error: m.error })
        return
      }
      this.deps.log.info('salt-master answers again: minions reconnecting are not offline during the grace', { grace_until: this.graceUntil() })
      if (this.follower) return
      // The pollers that skipped their ticks while it was down run now, those that ask minions when the grace ends (once
      // the minions have reconnected); presence and jobs run now in any case (a tick already started is joined, not repeated).
      this.scheduler.masterAnswers(Math.max(0, (this.graceUntil() ?? 0) - this.deps.clock.now()))
      for (const name of ['presence', 'jobs']) if (this.scheduler.enabled(name)) void this.scheduler.run(name).catch(() => {})
    }
    void this.masterWatch.check()
    this.masterChecking ??= setInterval(() => void this.masterWatch.check(), this.masterCheckMs)
  }

  /** The salt side's state for the health view. */
  health(): SaltHealthSnapshot {
    if (!this.master.version) void this.masterVersion()
    const stream = this.stream.health()
    const m = this.masterWatch.health()
    const hold = this.presenceHold()
    return {
      masterVersion: this.master.version, reachability: this.client.reachability(), stream, covering: this.stream.down,
      master: { up: m.up, since: m.since, error: m.error, hold, graceUntil: hold === 'grace' ? this.graceUntil() : null, checkSeconds: Math.round(this.masterCheckMs / 1000) },
      pollers: this.scheduler.health(this.deps.clock.now()),
    }
  }

  /** Whether the connection is complete: URL, username and a password that decrypts. */
  configured() {
    if (this.source === 'default') return settingsStatus(this.deps).configured
    const c = this.credentials()
    return !!(c.url && c.username && c.password)
  }

  /** Every running source's side, this one first. */
  sources(): SourceSide[] {
    return [this, ...this.others()]
  }

  /** The pollers, for the HTTP side. */
  get pollers() {
    return this.scheduler
  }

  /** How this runtime's refreshes run: each minion asked through its salt source's salt-api (contract §15 "Several masters"). */
  private inventoryOptions() {
    const sources = () => this.sources().filter((s) => s === this || s.configured()).map((s) => ({ source: s.source, client: s.client }))
    return { ...refreshOptions(this.deps, this.client, this.inventoryWorker), batch: this.inventoryBatch, sources }
  }

  /** Starts an inventory refresh in the background. */
  async refreshInventory(target: string) {
    const { done: _, ...started } = await startInventoryRefresh(this.deps, this.inventoryOptions(), target)
    return started
  }

  /** Starts everything of one instance alone: the watches, the salt source's work and the fleet-wide pollers. */
  async start() {
    this.startWatching()
    await this.lead()
    if (this.fleetWide) this.leadFleet()
  }

  /** Starts what every instance runs, leader or not: salt-api's reachability and the master's watch (Salt health). */
  startWatching() {
    this.watchReachability()
    this.watchMaster()
  }

  /**
   * Starts the salt source's work on gaining its leadership: the pollers, the event stream and, for `default`'s
   * runtime, held returns' lookups, newcomers and batches. A `takeover` (another instance led it until now) reads
   * salt's job cache at once, so what salt holds of the gap is stored now rather than at the jobs poller's next tick.
   */
  async lead(opts: { takeover?: boolean } = {}) {
    if (this.working) return
    this.working = true
    this.follower = false
    if (this.fleetWide) {
      // A refresh left open by a dead leader (or a crash) is closed as failed; failing to read that starts the work anyway.
      const abandoned = await closeAbandonedRefreshes(this.deps).catch((e) => {
        this.deps.log.warn('open inventory refreshes unreadable', { error: e instanceof Error ? e.message : String(e) })
        return 0
      })
      if (abandoned) this.deps.log.warn('inventory refresh left open by a crash closed as failed', { refreshes: abandoned })
    }
    this.scheduler.start(this.scheduler.names.filter((n) => !FLEET_POLLERS.includes(n)))
    if (this.stream.enabled()) void this.stream.start()
    if (!this.fleetWide) {
      if (opts.takeover) void this.scheduler.run('jobs')
      return
    }
    this.confirming ??= setInterval(() => this.confirmHeld(), CONFIRM_EVERY_MS)
    this.watchKeys()
    // Batches advance every second; running ones left by a stop resume from the tables (features/batches/service.ts).
    this.batching ??= setInterval(() => this.advanceBatches(), CONFIRM_EVERY_MS)
    if (opts.takeover) void this.scheduler.run('jobs')
  }

  /** Clears what a leader runs on timers and watches: held-return lookups, batches, pending hints, the keys watch. */
  private stopLeaderTimers() {
    if (this.confirming) clearInterval(this.confirming)
    this.confirming = null
    if (this.batching) clearInterval(this.batching)
    this.batching = null
    for (const t of this.hinted.values()) clearTimeout(t)
    this.hinted.clear()
    this.unwatchKeys?.()
    this.unwatchKeys = null
  }

  /** Stops the salt source's work at once (its leadership is lost: another instance runs it now). */
  async unlead() {
    this.follower = true
    if (!this.working) return
    this.working = false
    this.stopLeaderTimers()
    await this.scheduler.stopSome(this.scheduler.names.filter((n) => !FLEET_POLLERS.includes(n)))
    await this.stream.stop()
    await this.confirmRun
    await this.batchRun
  }

  /** Whether this instance runs the salt source's work now. */
  get leads() {
    return this.working
  }

  /** Marks this instance a follower until it gains the source's leadership (serve in a cluster, before competing). */
  follow() {
    this.follower = !this.working
  }

  /** Starts the fleet-wide pollers (retention) on gaining the fleet leadership. */
  leadFleet() {
    this.scheduler.start(FLEET_POLLERS)
  }

  /** Stops the fleet-wide pollers (the fleet leadership is lost). */
  unleadFleet() {
    return this.scheduler.stopSome(FLEET_POLLERS)
  }

  /** One step of every running batch, never two at once. */
  advanceBatches() {
    this.batchRun ??= advanceBatches(this.deps, this.client)
      .catch((e) => this.deps.log.warn('batch step failed', { error: e instanceof Error ? e.message : String(e) }))
      .finally(() => { this.batchRun = null })
    return this.batchRun
  }

  /** Applies a settings change at once: new credentials re-log in, new intervals reschedule. */
  async settingsChanged(section: string) {
    if (section === 'salt') {
      this.master = { version: null, asked: null }
      await this.client.logout()
      // Another salt-api may front another master: ask it now rather than at the next check.
      if (this.masterChecking) void this.masterWatch.check()
    }
    if (section === 'salt' || section === 'pollers') {
      this.scheduler.reschedule()
      // New credentials need a new stream; a poller interval change leaves a running stream alone.
      if (!this.follower && (section === 'salt' || this.stream.enabled() !== this.stream.running)) await this.stream.reload()
    }
  }

  /** Stops the pollers and the stream, writing pending events. */
  async stop() {
    this.working = false
    this.follower = true
    if (this.probing) clearInterval(this.probing)
    if (this.masterChecking) clearInterval(this.masterChecking)
    this.probing = this.masterChecking = null
    this.stopLeaderTimers()
    await this.confirmRun
    await this.newcomers.stop()
    await this.scheduler.stop()
    await this.stream.stop()
    await this.client.logout()
  }
}
