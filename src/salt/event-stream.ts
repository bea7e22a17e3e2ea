/**
 * The salt-api /events consumer: a reader (events.ts) on a worker thread, or on the main thread when no worker
 * starts, hands over salt facts; they are handed to the store in batches (one transaction each).
 */
import type { SaltClient } from './client'
import type { SaltFacts } from './facts'
import { readEvents, type Backoff, type ReaderSink } from './events'
import type { FrameRefusal } from './frames'
import type { FromEventWorker, ToEventWorker } from './event-worker'
import { startWorker, stopWorker, workerUrl } from '../lib/worker-thread'
import type { Logger } from '../lib/log'
import type { Clock } from '../lib/clock'

/** What the stream needs of the service: the salt client, where batches go, whether it is wanted, a clock and a log. */
export interface StreamWiring {
  client: SaltClient
  /** Stores one batch of facts in one transaction. */
  store(batch: SaltFacts[]): Promise<void>
  /** Whether the settings ask for the stream. */
  enabled(): boolean
  clock: Clock
  log: Logger
}

/** Events per write transaction at most, and the longest an event waits for its batch. */
export const BATCH_MAX = 2000
export const BATCH_WAIT_MS = 50

const WORKER_URL = workerUrl(import.meta.url, 'salt/event-worker.ts')

/** The stream's state: reading, trying to reconnect, failing at once while salt-api answers, or turned off. */
export type StreamState = 'connected' | 'reconnecting' | 'broken' | 'disabled'

/** The consumer and its status. */
export class EventStream {
  connected = false
  broken = false
  eventsIngested = 0
  framesSkipped = 0
  /** Frames dropped, by why (frames.ts). */
  readonly refused: Record<FrameRefusal, number> = { frame: 0, injected: 0 }
  private refusalLoggedAt = -Infinity
  reconnects = 0
  lastError: string | null = null
  /** When the last event arrived, and when the state last changed (epoch ms). */
  lastEventAt: number | null = null
  stateSince: number
  private lastState: StreamState
  /** Reconnect times within the last hour. */
  private recent: number[] = []
  /** Told when the state changes (the runtime retimes the catch-up pollers). */
  onState: (s: StreamState) => void = () => {}
  /** Whether the reader may run on a worker thread (tests turn it off to read on the main thread, with their clock). */
  useWorker = true
  private ac: AbortController | null = null
  private loop: Promise<void> | null = null
  private worker: Worker | null = null
  private pending: SaltFacts[] = []
  private timer: ReturnType<typeof setTimeout> | null = null
  private immediate: ReturnType<typeof setImmediate> | null = null
  private starting: Promise<void> | null = null

  constructor(private w: StreamWiring, private backoff: Backoff = { firstMs: 1000, maxMs: 30_000 }) {
    this.lastState = this.state
    this.stateSince = w.clock.now()
  }

  /** The state now. */
  get state(): StreamState {
    if (!this.enabled()) return 'disabled'
    if (this.connected && !this.broken) return 'connected'
    return this.broken ? 'broken' : 'reconnecting'
  }

  /** Whether the stream is wanted but not delivering: the pollers cover for it. */
  get down() {
    const s = this.state
    return s === 'reconnecting' || s === 'broken'
  }

  /** Notes a possible state change. */
  private changed() {
    const s = this.state
    if (s === this.lastState) return
    this.lastState = s
    this.stateSince = this.w.clock.now()
    this.onState(s)
  }

  /** Reconnects within the last hour. */
  reconnectsLastHour() {
    const cut = this.w.clock.now() - 3600_000
    this.recent = this.recent.filter((t) => t > cut)
    return this.recent.length
  }

  /** Facts received but not yet written (written within BATCH_WAIT_MS, or at stop). */
  get pendingCount() {
    return this.pending.length
  }

  /** Whether the settings ask for the stream. */
  enabled() {
    return this.w.enabled()
  }

  /** Starts (or restarts) the reader when enabled; stops it when not. */
  async reload() {
    await this.stop()
    if (this.enabled()) await this.start()
  }

  /** Whether a reader runs (on either thread). */
  get running() {
    return this.loop !== null || this.worker !== null
  }

  /** Whether a worker thread reads the stream. */
  get threaded() {
    return this.worker !== null
  }

  /** Starts the reader: on a worker when it starts, else on the main thread. */
  start(): Promise<void> {
    // One start at a time: a settings change can arrive while the worker is still starting.
    this.starting ??= this.open().finally(() => (this.starting = null))
    return this.starting
  }

  private async open() {
    if (this.loop || this.worker) return
    if (this.useWorker && (await this.openWorker())) return
    const ac = (this.ac = new AbortController())
    this.loop = readEvents(this.w.client, ac.signal, () => this.w.clock.now(), this.backoff, this.sink)
  }

  /** Stops the reader and writes what is pending. */
  async stop() {
    await this.starting
    this.ac?.abort()
    await this.loop
    this.loop = null
    this.ac = null
    await this.endWorker()
    this.connected = this.broken = false
    await this.flushAll()
    this.changed()
  }

  /** Where the reader's reports land, from either thread. */
  private sink: ReaderSink = {
    connected: (on) => {
      this.connected = on
      if (on) this.lastError = null
      if (!on) void this.flush()
      this.changed()
    },
    facts: (list) => {
      this.lastEventAt = this.w.clock.now()
      for (const i of list) this.pending.push(i)
      if (this.pending.length >= BATCH_MAX) void this.flush()
      else this.schedule()
    },
    skipped: (reason) => {
      this.framesSkipped++
      this.refused[reason]++
      // One line a minute at most: a hostile minion must not flood the log. The frame's text is never logged.
      const now = this.w.clock.now()
      if (now - this.refusalLoggedAt < 60_000) return
      this.refusalLoggedAt = now
      this.w.log.warn('event stream frame refused: not salt\'s, or written into the stream by another event\'s tag', { reason, refused: { ...this.refused } })
    },
    failed: (detail) => {
      this.lastError = detail
      this.w.log.warn('event stream error', { error: detail })
    },
    reconnecting: () => {
      this.reconnects++
      this.recent.push(this.w.clock.now())
    },
    broken: (on) => {
      this.broken = on
      if (on) this.w.log.warn('event stream broken: it fails at once while salt-api answers; polling covers for it', { error: this.lastError })
      this.changed()
    },
  }

  private async openWorker(): Promise<boolean> {
    const onMessage = (m: FromEventWorker) => {
      // Stored by a timer, never in this handler: the worker's messages would otherwise keep the thread from HTTP.
      if (m.type === 'facts') {
        this.lastEventAt = this.w.clock.now()
        for (const f of JSON.parse(m.json) as SaltFacts[]) this.pending.push(f)
        this.schedule()
      }
      else if (m.type === 'broken') this.sink.broken(m.on)
      else if (m.type === 'connected') this.sink.connected(m.on)
      else if (m.type === 'skipped') this.sink.skipped(m.reason)
      else if (m.type === 'failed') this.sink.failed(m.detail)
      else if (m.type === 'reconnecting') this.sink.reconnecting()
    }
    const start = { type: 'start', creds: this.w.client.credentials(), tuning: this.w.client.tuning, backoff: this.backoff } satisfies ToEventWorker
    this.worker = await startWorker(WORKER_URL, start, onMessage, this.w.log, 'event stream')
    return this.worker !== null
  }

  /** Asks the worker to stop; every intent it posted before its `stopped` has been received when this returns. */
  private async endWorker() {
    const w = this.worker
    if (!w) return
    this.worker = null
    await stopWorker(w)
    this.connected = false
  }

  /** Sets the next write: a full batch on the next turn of the event loop (after pending I/O), else within BATCH_WAIT_MS. */
  private schedule() {
    if (this.pending.length >= BATCH_MAX) {
      // setImmediate, not setTimeout(0): Bun clamps the timer to about 1 ms.
      this.immediate ??= setImmediate(() => ((this.immediate = null), void this.flush()))
      return
    }
    this.timer ??= setTimeout(() => void this.flush(), BATCH_WAIT_MS)
  }

  /** The write under way (batches are written one after another, in order); never rejects. */
  private writing: Promise<void> = Promise.resolve()

  /**
   * Writes up to BATCH_MAX pending facts in one transaction and schedules the rest, so requests get the thread
   * between batches; tells the worker how many it may read on. Batches are written one at a time, in order: a flush
   * asked for while one is being written goes after it.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    if (this.immediate) clearImmediate(this.immediate)
    this.timer = this.immediate = null
    this.writing = this.writing.then(() => this.write())
    return this.writing
  }

  /** Writes one batch (errors are logged and kept for the status, never thrown). */
  private async write() {
    if (!this.pending.length) return
    const batch = this.pending.splice(0, BATCH_MAX)
    try {
      await this.w.store(batch)
      this.eventsIngested += batch.length
    } catch (e) {
      this.lastError = (e as Error).message
      this.w.log.error('event batch failed', { error: this.lastError, size: batch.length })
    }
    this.worker?.postMessage({ type: 'ack', n: batch.length } satisfies ToEventWorker)
    if (this.pending.length) this.schedule()
  }

  /** Writes everything pending (at stop). */
  private async flushAll() {
    while (this.pending.length) await this.flush()
    await this.writing
  }

  /** Status for the pollers page and metrics. */
  status() {
    return { enabled: this.enabled(), connected: this.connected, events_ingested: this.eventsIngested, frames_skipped: this.framesSkipped, reconnects: this.reconnects, last_error: this.lastError }
  }

  /** The state for the health view: what it is, since when, the last event and the reconnects of the last hour. */
  health() {
    this.changed()
    return { state: this.state, since: this.stateSince, lastEventAt: this.lastEventAt, reconnectsLastHour: this.reconnectsLastHour(), lastError: this.lastError }
  }
}
