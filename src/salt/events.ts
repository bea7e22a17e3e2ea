/**
 * Reads salt-api's /events: one long-lived stream, parsed as it arrives and normalised, chunk by chunk; reconnects
 * with backoff 1 s → 30 s, and the client logs in again when the token has expired. Runs on the event stream's worker
 * thread (event-worker.ts) or, when no worker starts, on the main thread; either way it reports to a sink.
 */
import type { SaltClient } from './client'
import { SseParser } from './sse'
import { normalize } from './normalize'
import type { SaltFacts } from './facts'
import { errorText } from './errors'

/** What the reader reports, in order. */
export interface ReaderSink {
  connected(on: boolean): void
  /** The events one network chunk completed, as facts in arrival order; reading waits while it returns a promise. */
  facts(list: SaltFacts[]): void | Promise<void>
  skipped(): void
  /** A connection ended with an error; the reader waits, then reconnects. */
  failed(detail: string): void
  /** Called before each reconnect after the first connection. */
  reconnecting(): void
}

/** Delays between reconnects. */
export interface Backoff {
  firstMs: number
  maxMs: number
}

/** Reads until `signal` aborts. */
export async function readEvents(client: SaltClient, signal: AbortSignal, now: () => number, backoff: Backoff, sink: ReaderSink) {
  let wait = backoff.firstMs
  while (!signal.aborted) {
    try {
      const res = await client.events(signal)
      sink.connected(true)
      wait = backoff.firstMs
      await readBody(res, signal, now, sink)
    } catch (e) {
      if (signal.aborted) break
      sink.failed(errorText(e))
    } finally {
      sink.connected(false)
    }
    if (signal.aborted) break
    sink.reconnecting()
    await new Promise<void>((r) => {
      const t = setTimeout(r, wait)
      signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true })
    })
    wait = Math.min(wait * 2, backoff.maxMs)
  }
}

async function readBody(res: Response, signal: AbortSignal, now: () => number, sink: ReaderSink) {
  const parser = new SseParser()
  const decoder = new TextDecoder()
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (signal.aborted) return
    const list: SaltFacts[] = []
    for (const f of parser.push(decoder.decode(chunk, { stream: true }))) {
      let msg: { tag?: unknown; data?: unknown }
      try {
        msg = JSON.parse(f.data)
      } catch {
        sink.skipped()
        continue
      }
      const tag = typeof msg.tag === 'string' ? msg.tag : f.tag
      if (!tag || !msg.data || typeof msg.data !== 'object') {
        sink.skipped()
        continue
      }
      list.push(normalize(tag, msg.data as Record<string, unknown>, now()))
    }
    if (list.length) await sink.facts(list)
  }
}
