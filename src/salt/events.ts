/**
 * Reads salt-api's /events: one long-lived stream, parsed as it arrives and normalised, chunk by chunk. Between
 * connections it probes salt-api cheaply, so a salt-api that comes back is noticed within a probe interval rather than
 * a backoff; a stream that keeps failing at once while salt-api answers (salt 3008.2's /events traceback, #69958) is
 * reported broken and retried rarely instead of in a loop. Runs on the event stream's worker thread (event-worker.ts)
 * or, when no worker starts, on the main thread; either way it reports to a sink.
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
  /** The stream fails at once while salt-api answers (true), or delivered events again (false). */
  broken(on: boolean): void
}

/** Timing between connections. */
export interface Backoff {
  /** First and longest wait between reconnects while salt-api answers. */
  firstMs: number
  maxMs: number
  /** How often salt-api is probed while it does not answer (default 2 s). */
  probeMs?: number
  /** Failed connections in a row, with salt-api answering, that make the stream broken (default 3). */
  brokenAfter?: number
  /** The wait between attempts while broken (default 5 min). */
  brokenRetryMs?: number
}

/** A connection that ends this soon without an event counts as failed at once. */
const FAST_FAIL_MS = 10_000

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal) {
  return new Promise<void>((r) => {
    const t = setTimeout(r, ms)
    signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true })
  })
}

/** Reads until `signal` aborts. */
export async function readEvents(client: SaltClient, signal: AbortSignal, now: () => number, backoff: Backoff, sink: ReaderSink) {
  const probeMs = backoff.probeMs ?? 2000
  const brokenAfter = backoff.brokenAfter ?? 3
  let wait = backoff.firstMs
  let failedInRow = 0
  let broken = false
  while (!signal.aborted) {
    const opened = Date.now()
    let frames = 0
    // A connection that delivers an event, or stays open a while (an idle master sends nothing), is working again.
    const working = () => {
      failedInRow = 0
      if (broken) (broken = false), sink.broken(false)
    }
    let steady: ReturnType<typeof setTimeout> | null = null
    try {
      const res = await client.events(signal)
      sink.connected(true)
      wait = backoff.firstMs
      steady = setTimeout(working, FAST_FAIL_MS)
      await readBody(res, signal, now, {
        ...sink,
        facts: (list) => {
          frames += list.length
          working()
          return sink.facts(list)
        },
      })
    } catch (e) {
      if (signal.aborted) break
      sink.failed(errorText(e))
    } finally {
      if (steady) clearTimeout(steady)
      sink.connected(false)
    }
    if (signal.aborted) break
    if (frames === 0 && Date.now() - opened < FAST_FAIL_MS) failedInRow++
    sink.reconnecting()
    // salt-api gone: wait for it to answer again (probing cheaply), then reconnect at once.
    if (!(await client.probe())) {
      while (!signal.aborted && !(await client.probe())) await pause(probeMs, signal)
      wait = backoff.firstMs
      continue
    }
    if (failedInRow >= brokenAfter && !broken) (broken = true), sink.broken(true)
    await pause(broken ? (backoff.brokenRetryMs ?? 300_000) : wait, signal)
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
