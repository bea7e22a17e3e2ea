/**
 * The salt side of a running service, composed: the salt client, the pollers on their scheduler and the event stream,
 * each handing salt facts to the features. Built and started by serve only (tests and CLI commands start no timers).
 */
import type { AppDeps, SaltSide } from './deps'
import { SaltClient, type ClientOptions } from './salt/client'
import { EventStream } from './salt/event-stream'
import type { Backoff } from './salt/events'
import { Scheduler } from './pollers/scheduler'
import { definePollers } from './pollers/definitions'
import { applyFacts } from './features/ingest/apply'
import { readSection, saltCredentials } from './features/settings/service'
import { refreshOptions, startInventoryRefresh } from './features/inventory/refresh'

/** The salt side of one service. */
export class SaltRuntime implements SaltSide {
  readonly client: SaltClient
  readonly scheduler: Scheduler
  readonly stream: EventStream
  /** Whether inventory answers are read on a worker thread (tests turn it off to cover the main-thread reader). */
  inventoryWorker = true
  /** Minions per inventory batch (SALTDECK_INVENTORY_BATCH; tests make it small). */
  inventoryBatch: number

  constructor(readonly deps: AppDeps, opts: { client?: Partial<ClientOptions>; streamBackoff?: Backoff } = {}) {
    this.client = new SaltClient(() => saltCredentials(deps), opts.client, () => deps.clock.now())
    this.inventoryBatch = deps.config.inventoryBatch
    this.scheduler = new Scheduler(deps, definePollers({ deps, client: this.client, inventory: () => this.inventoryOptions() }))
    this.stream = new EventStream({
      client: this.client, clock: deps.clock, log: deps.log,
      store: (batch) => void applyFacts(deps, batch),
      enabled: () => readSection(deps, 'pollers').event_stream_enabled === true,
    }, opts.streamBackoff)
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
    this.scheduler.start()
    if (this.stream.enabled()) void this.stream.start()
  }

  /** Applies a settings change at once: new credentials re-log in, new intervals reschedule. */
  async settingsChanged(section: string) {
    if (section === 'salt') this.client.reset()
    if (section === 'salt' || section === 'pollers') {
      this.scheduler.reschedule()
      await this.stream.reload()
    }
  }

  /** Stops the pollers and the stream, writing pending events. */
  async stop() {
    await this.scheduler.stop()
    await this.stream.stop()
  }
}
