/**
 * The salt-api /events consumer: one long-lived stream, parsed as it arrives, normalised and written in batched
 * transactions; reconnects with backoff 1 s → 30 s and logs in again when the token expires.
 */
import type { SaltRuntime } from '../salt/runtime'
import { SseParser } from '../salt/sse'
import { normalize, type Intents } from '../salt/normalize'
import { runFunctions } from '../config'
import { readSection } from '../features/settings/service'
import { AppError } from '../http/errors'

/** Events per write transaction at most, and the longest an event waits for its batch. */
export const BATCH_MAX = 2000
export const BATCH_WAIT_MS = 50

/** The consumer and its status. */
export class EventStream {
  connected = false
  eventsIngested = 0
  framesSkipped = 0
  reconnects = 0
  lastError: string | null = null
  private ac: AbortController | null = null
  private loop: Promise<void> | null = null
  private pending: Intents[] = []
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(private rt: SaltRuntime, private backoff = { firstMs: 1000, maxMs: 30_000 }) {}

  /** Intents received but not yet written (written within BATCH_WAIT_MS, or at stop). */
  get pendingCount() {
    return this.pending.length
  }

  /** Whether the settings ask for the stream. */
  enabled() {
    return readSection(this.rt.deps, 'pollers').event_stream_enabled === true
  }

  /** Starts (or restarts) the loop when enabled; stops it when not. */
  async reload() {
    await this.stop()
    if (this.enabled()) this.start()
  }

  /** Starts the loop. */
  start() {
    if (this.loop) return
    const ac = (this.ac = new AbortController())
    this.loop = this.run(ac.signal)
  }

  /** Stops the loop and writes what is pending. */
  async stop() {
    this.ac?.abort()
    await this.loop
    this.loop = null
    this.flush()
  }

  private async run(signal: AbortSignal) {
    let wait = this.backoff.firstMs
    while (!signal.aborted) {
      try {
        const res = await this.rt.client.events(signal)
        this.connected = true
        wait = this.backoff.firstMs
        await this.read(res, signal)
      } catch (e) {
        if (signal.aborted) break
        this.lastError = e instanceof AppError ? e.detail : (e as Error).message
        this.rt.deps.log.warn('event stream error', { error: this.lastError })
      } finally {
        this.connected = false
        this.flush()
      }
      if (signal.aborted) break
      this.reconnects++
      await new Promise<void>((r) => {
        const t = setTimeout(r, wait)
        signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true })
      })
      wait = Math.min(wait * 2, this.backoff.maxMs)
    }
  }

  private async read(res: Response, signal: AbortSignal) {
    const parser = new SseParser()
    const decoder = new TextDecoder()
    const runFuns = runFunctions(this.rt.deps.config)
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (signal.aborted) return
      for (const f of parser.push(decoder.decode(chunk, { stream: true }))) {
        let msg: { tag?: unknown; data?: unknown }
        try {
          msg = JSON.parse(f.data)
        } catch {
          this.framesSkipped++
          continue
        }
        const tag = typeof msg.tag === 'string' ? msg.tag : f.tag
        if (!tag || !msg.data || typeof msg.data !== 'object') {
          this.framesSkipped++
          continue
        }
        this.pending.push(normalize(tag, msg.data as Record<string, unknown>, this.rt.deps.clock.now(), runFuns))
        if (this.pending.length >= BATCH_MAX) this.flush()
        else this.timer ??= setTimeout(() => this.flush(), BATCH_WAIT_MS)
      }
    }
  }

  /** Writes the pending intents in one transaction. */
  flush() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (!this.pending.length) return
    const batch = this.pending
    this.pending = []
    try {
      this.rt.ingest.apply(batch)
      this.eventsIngested += batch.length
    } catch (e) {
      this.lastError = (e as Error).message
      this.rt.deps.log.error('event batch failed', { error: this.lastError, size: batch.length })
    }
  }

  /** Status for the pollers page and metrics. */
  status() {
    return { enabled: this.enabled(), connected: this.connected, events_ingested: this.eventsIngested, frames_skipped: this.framesSkipped, reconnects: this.reconnects, last_error: this.lastError }
  }
}
