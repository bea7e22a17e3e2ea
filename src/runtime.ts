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
import { presenceMethod, readSection, saltCredentials } from './features/settings/service'
import type { SaltFacts } from './salt/facts'
import { refreshOptions, startInventoryRefresh } from './features/inventory/refresh'
import { closeAbandonedRefreshes, lastRefreshLostSalt } from './features/inventory/service'

/**
 * A stream batch without the master's presence events: salt/presence/present and /change come from the connection
 * table, matched by address, as manage.present does; with presence method `status` the operator chose pings instead,
 * and those events would mark a stopped minion online again every loop_interval.
 */
const withoutPresence = (f: SaltFacts): SaltFacts => (f.presentList || f.presence.length ? { ...f, presentList: undefined, presence: [] } : f)

/**
 * A stream batch's presence as arrivals only: while the master does not answer, and in the grace after it answers again
 * (its connection table fills as minions reconnect), a minion missing from a present list is not offline.
 */
const arrivalsOnly = (f: SaltFacts): SaltFacts =>
  f.presentList || f.presence.some((p) => !p.online)
    ? { ...f, presentList: undefined, presence: [...f.presence.filter((p) => p.online), ...(f.presentList?.ids ?? []).map((id) => ({ minionId: id, online: true, ts: f.presentList!.ts }))] }
    : f

/** How often the master is checked (a check waits up to MasterWatch's 15 s): a stop is seen within 30 s. */
const MASTER_CHECK_MS = 15_000
/** The grace after the master answers again, in presence intervals (contract §17). */
const GRACE_INTERVALS = 2

/** The salt side of one service. */
export class SaltRuntime implements SaltSide {
  readonly client: SaltClient
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
  /** How often the master is checked while running (tests shorten it). */
  masterCheckMs: number

  constructor(readonly deps: AppDeps, opts: { client?: Partial<ClientOptions>; streamBackoff?: Backoff; probeMs?: number; masterCheckMs?: number; masterTimeoutMs?: number } = {}) {
    this.client = new SaltClient(() => saltCredentials(deps), { outboundAllow: deps.config.outboundAllow, ...opts.client }, () => deps.clock.now())
    this.inventoryBatch = deps.config.inventoryBatch
    this.probeMs = opts.probeMs ?? 2000
    this.masterCheckMs = opts.masterCheckMs ?? MASTER_CHECK_MS
    this.masterWatch = new MasterWatch(this.client, () => deps.clock.now(), opts.masterTimeoutMs)
    this.scheduler = new Scheduler(deps, definePollers({
      deps, client: this.client, inventory: () => this.inventoryOptions(),
      streamDown: () => this.stream.down, masterVersion: () => this.masterVersion(), presenceHold: () => this.presenceHold(),
      presenceDeadlineMs: () => this.presenceDeadlineMs,
    }))
    this.stream = new EventStream({
      client: this.client, clock: deps.clock, log: deps.log,
      store: (batch) => {
        const hold = this.presenceHold() !== null
        void applyFacts(deps, presenceMethod(deps) === 'status' ? batch.map(withoutPresence) : hold ? batch.map(arrivalsOnly) : batch)
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

  /** While salt-api does not answer, probes it; once it answers again (seen by any call), presence, keys and jobs run at once. */
  private watchReachability() {
    this.client.onReachChange = (up) => {
      if (!up) return
      this.deps.log.info('salt-api answers again')
      // The errors its absence caused clear now, and those pollers run again (not at their next tick, up to hours away).
      this.scheduler.saltAnswers()
      void this.masterWatch.check()
      for (const name of ['presence', 'keys', 'jobs']) if (this.scheduler.enabled(name)) void this.scheduler.run(name)
      // A refresh salt-api's absence broke is run again now, rather than its error and stale packages staying for hours.
      if (lastRefreshLostSalt(this.deps) && this.scheduler.enabled('inventory')) void this.scheduler.run('inventory')
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

  /** Whether the stored online flags are current: salt-api answered at its last exchange and the master holds nothing back. */
  presenceKnown() {
    return (this.client.reachability().up !== false || this.stream.state === 'connected') && this.presenceHold() === null
  }

  /** Watches the master: a check now and every masterCheckMs; once it answers again, presence and jobs run at once. */
  private watchMaster() {
    this.masterWatch.onChange = (up) => {
      if (!up) {
        const m = this.masterWatch.health()
        this.deps.log.warn('salt-master does not answer (salt-api does): presence is unknown and nobody goes offline until it does', { error: m.error })
        return
      }
      this.deps.log.info('salt-master answers again: minions reconnecting are not offline during the grace', { grace_until: this.graceUntil() })
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

  /** The pollers, for the HTTP side. */
  get pollers() {
    return this.scheduler
  }

  private inventoryOptions() {
    return { ...refreshOptions(this.deps, this.client, this.inventoryWorker), batch: this.inventoryBatch }
  }

  /** Starts an inventory refresh in the background. */
  refreshInventory(target: string) {
    const { done: _, ...started } = startInventoryRefresh(this.deps, this.inventoryOptions(), target)
    return started
  }

  /** Starts the pollers and, when enabled, the event stream. */
  start() {
    const abandoned = closeAbandonedRefreshes(this.deps)
    if (abandoned) this.deps.log.warn('inventory refresh left open by a crash closed as failed', { refreshes: abandoned })
    this.scheduler.start()
    if (this.stream.enabled()) void this.stream.start()
    this.watchReachability()
    this.watchMaster()
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
      if (section === 'salt' || this.stream.enabled() !== this.stream.running) await this.stream.reload()
    }
  }

  /** Stops the pollers and the stream, writing pending events. */
  async stop() {
    if (this.probing) clearInterval(this.probing)
    if (this.masterChecking) clearInterval(this.masterChecking)
    this.probing = this.masterChecking = null
    await this.scheduler.stop()
    await this.stream.stop()
    await this.client.logout()
  }
}
