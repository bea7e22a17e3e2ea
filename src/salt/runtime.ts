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
import { SearchIndexer } from '../features/activity/search-indexer'

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
  /** Keeps the activity search index current (a worker thread when the database is a file). */
  readonly search: SearchIndexer

  constructor(readonly deps: AppDeps, opts: { client?: Partial<ClientOptions>; streamBackoff?: { firstMs: number; maxMs: number } } = {}) {
    this.client = new SaltClient(() => saltCredentials(deps), opts.client, () => deps.clock.now())
    this.ingest = new Ingestor(deps)
    this.inventoryBatch = deps.config.inventoryBatch
    this.scheduler = new Scheduler(deps, [keysPoller(this), presencePoller(this), grainsPoller(this), jobsPoller(this), fleetPoller(this), inventoryPoller(this), retentionPoller(this)])
    this.stream = new EventStream(this, opts.streamBackoff)
    this.search = new SearchIndexer(deps)
  }

  /** Starts the pollers and, when enabled, the event stream. */
  start() {
    // The search index follows the activity table within a couple of seconds whatever wrote the events.
    void this.search.start()
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

  /** Stops pollers and the stream, writing pending events. */
  async stop() {
    await this.scheduler.stop()
    await this.stream.stop()
    await this.search.stop()
  }
}
