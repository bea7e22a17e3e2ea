/** Everything that talks to salt, owned together: client, ingest, pollers and the event stream. Started by serve only. */
import type { AppDeps } from '../deps'
import { SaltClient, type ClientOptions } from './client'
import { Ingestor } from './ingest'
import { Scheduler } from '../pollers/scheduler'
import { grainsPoller, keysPoller, presencePoller, retentionPoller } from '../pollers/fleet-pollers'
import { fleetPoller, jobsPoller } from '../pollers/jobs'
import { inventoryPoller } from '../pollers/inventory'
import { EventStream } from '../pollers/event-stream'
import { saltCredentials } from '../features/settings/service'
import { indexActivity } from '../features/activity/service'

/** The salt side of one running service. */
export class SaltRuntime {
  readonly client: SaltClient
  readonly ingest: Ingestor
  readonly scheduler: Scheduler
  readonly stream: EventStream
  /** Minions per inventory batch (SALTDECK_INVENTORY_BATCH). */
  readonly inventoryBatch: number
  /** Whether inventory answers are read on a worker thread (tests turn it off to cover the main-thread reader). */
  inventoryWorker = true
  private indexer: ReturnType<typeof setInterval> | undefined

  constructor(readonly deps: AppDeps, opts: { client?: Partial<ClientOptions>; streamBackoff?: { firstMs: number; maxMs: number } } = {}) {
    this.client = new SaltClient(() => saltCredentials(deps), opts.client, () => deps.clock.now())
    this.ingest = new Ingestor(deps)
    this.inventoryBatch = deps.config.inventoryBatch
    this.scheduler = new Scheduler(deps, [keysPoller(this), presencePoller(this), grainsPoller(this), jobsPoller(this), fleetPoller(this), inventoryPoller(this), retentionPoller(this)])
    this.stream = new EventStream(this, opts.streamBackoff)
  }

  /** Starts the pollers and, when enabled, the event stream. */
  start() {
    // The search index follows the activity table within a couple of seconds whatever wrote the events.
    this.indexer = setInterval(() => {
      try {
        indexActivity(this.deps)
      } catch (e) {
        this.deps.log.warn('search indexing failed', { error: (e as Error).message })
      }
    }, 2000)
    this.scheduler.start()
    if (this.stream.enabled()) this.stream.start()
  }

  /** Applies a settings change at once: new credentials re-log in, new intervals reschedule. */
  async settingsChanged(section: string) {
    if (section === 'salt') this.client.reset()
    if (section === 'salt' || section === 'pollers') {
      this.scheduler.reschedule()
      await this.stream.reload()
    }
  }

  /** Stops pollers and the stream, writing pending events. */
  async stop() {
    clearInterval(this.indexer)
    await this.scheduler.stop()
    await this.stream.stop()
  }
}
