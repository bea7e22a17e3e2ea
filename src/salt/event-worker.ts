/**
 * The event stream's reading thread: it holds the /events connection, parses and normalises what arrives and posts
 * each chunk's salt facts to the main thread as one JSON text (far cheaper to pass than structured clones of the
 * objects), so the main thread only stores. With the search indexer's worker, ingest uses the machine's cores.
 */
import { SaltClient, type ClientOptions, type SaltCreds } from './client'
import { readEvents, type Backoff } from './events'
import type { FrameRefusal } from './frames'

/** Messages from the service. */
export type ToEventWorker =
  | { type: 'start'; creds: SaltCreds; tuning: Omit<ClientOptions, 'sleep'>; backoff: Backoff }
  | { type: 'ack'; n: number }
  | { type: 'stop' }
/** Messages to the service; `json` is a SaltFacts[] as JSON text. */
export type FromEventWorker =
  | { type: 'ready' }
  | { type: 'connected'; on: boolean }
  | { type: 'facts'; json: string }
  | { type: 'skipped'; reason: FrameRefusal }
  | { type: 'failed'; detail: string }
  | { type: 'reconnecting' }
  | { type: 'broken'; on: boolean }
  | { type: 'stopped' }

declare const self: Worker

const post = (m: FromEventWorker) => self.postMessage(m)
const ac = new AbortController()
let loop: Promise<void> | null = null
let client: SaltClient | null = null

// Backpressure: at most IN_FLIGHT events handed over and not yet written by the main thread (it acks what it wrote).
// Past that, reading waits, so a main thread that stores slower than salt sends holds a bounded queue (and TCP slows
// salt-api down) instead of letting messages pile up in memory. A few batches' worth, so both threads stay busy.
const IN_FLIGHT = 16_000
let inFlight = 0
let resume: (() => void) | null = null

function handOver(list: unknown[]): void | Promise<void> {
  post({ type: 'facts', json: JSON.stringify(list) })
  inFlight += list.length
  if (inFlight < IN_FLIGHT) return
  return new Promise<void>((r) => (resume = r))
}

self.onmessage = async (ev: MessageEvent<ToEventWorker>) => {
  const m = ev.data
  if (m.type === 'start') {
    client = new SaltClient(() => m.creds, m.tuning)
    post({ type: 'ready' })
    loop = readEvents(client, ac.signal, Date.now, m.backoff, {
      connected: (on) => post({ type: 'connected', on }),
      facts: handOver,
      skipped: (reason) => post({ type: 'skipped', reason }),
      failed: (detail) => post({ type: 'failed', detail }),
      reconnecting: () => post({ type: 'reconnecting' }),
      broken: (on) => post({ type: 'broken', on }),
    })
    return
  }
  if (m.type === 'ack') {
    inFlight -= m.n
    if (inFlight < IN_FLIGHT) resume?.(), (resume = null)
    return
  }
  ac.abort()
  resume?.()
  await loop
  await client?.logout()
  // Everything read was posted before this: the service writes it, then ends the thread.
  post({ type: 'stopped' })
}
