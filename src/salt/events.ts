/**
 * Reads salt-api's /events: one long-lived stream, parsed as it arrives and normalised, chunk by chunk. Between
 * connections it probes salt-api cheaply, so a salt-api that comes back is noticed within a probe interval rather than
 * a backoff; a stream that keeps failing at once while salt-api answers (salt 3008.2's /events traceback, #69958) is
 * reported broken and retried rarely instead of in a loop. Runs on the event stream's worker thread (event-worker.ts)
 * or, when no worker starts, on the main thread; either way it reports to a sink.
 */
import type { SaltClient } from './client'
import { SaltFrames, type BusEvent, type FrameRefusal } from './frames'
import { normalize } from './normalize'
import type { SaltFacts } from './facts'
import { errorText } from './errors'

/** What the reader reports, in order. */
export interface ReaderSink {
  connected(on: boolean): void
  /** The events one network chunk completed, as facts in arrival order; reading waits while it returns a promise. */
  facts(list: SaltFacts[]): void | Promise<void>
  /** A frame that is not salt's, or that another event's tag wrote into the stream, was dropped. */
  skipped(reason: FrameRefusal): void
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

const QUIET = Symbol('quiet')

/** Reads one connection's body: frames are checked and held (frames.ts), and handed on once none can be taken back. */
async function readBody(res: Response, signal: AbortSignal, now: () => number, sink: ReaderSink) {
  const frames = new SaltFrames()
  const decoder = new TextDecoder()
  const hand = (events: BusEvent[]) => (events.length ? sink.facts(events.map((e) => normalize(e.tag, e.data, now()))) : undefined)
  const it = (res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
  // A read left pending when the loop ends (abort) rejects later: that is expected, not an unhandled rejection.
  const read = () => {
    const p = it.next()
    p.catch(() => {})
    return p
  }
  let next = read()
  // The hold is about network timing, so it runs on the real clock, never the service's (tests stop theirs).
  const tick = () => performance.now()
  try {
    for (;;) {
      if (signal.aborted) return
      // Wait for text, or until a held frame is due.
      const wait = frames.nextReleaseIn(tick())
      let timer: ReturnType<typeof setTimeout> | undefined
      const r = wait === null ? await next : await Promise.race([next, new Promise<typeof QUIET>((ok) => (timer = setTimeout(ok, wait, QUIET)))])
      clearTimeout(timer)
      if (r !== QUIET) {
        if (r.done) break
        next = read()
        for (const reason of frames.push(decoder.decode(r.value, { stream: true }), tick())) sink.skipped(reason)
      }
      await hand(frames.release(tick()))
    }
  } finally {
    const end = frames.end()
    for (let i = 0; i < end.refused; i++) sink.skipped('frame')
    // Not awaited when stopping: the worker ends its backpressure wait as it stops.
    const handed = hand(end.events)
    if (!signal.aborted) await handed
  }
}
