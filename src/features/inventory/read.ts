/**
 * Where an inventory refresh gets its batches from: the reading worker (read-worker.ts), so that reading salt's
 * answers and storing sets run on two cores, or, when no worker can start (a compiled binary built without the worker
 * as an entry point), the main thread itself. Either way each package answer is scanned while it streams in, so at
 * most the answer being read and the next one arriving are held (the refresh asks in half batches, so that is one
 * batch's returns), and the sets come back as key indexes of the writer's catalog.
 */
import type { PackageCatalog } from './catalog'
import { grow } from '../../lib/slot-table'
import type { SaltClient } from '../../salt/client'
import { SaltRejected, SaltUnavailable } from '../../salt/errors'
import type { Logger } from '../../lib/log'
import { LIST_PKGS_KWARG, PkgAnswerScanner, type ScannedSets } from './pkg-scan'
import type { FromWorker, ToWorker } from './read-worker'
import { workerUrl } from '../../lib/worker-thread'

/** What a reader needs: the salt client, a log, whether it may read on a worker thread, and jids for Saltdeck's own jobs. */
export interface ReaderWiring {
  client: SaltClient
  log: Logger
  worker: boolean
  /** A new jid, noted as a job Saltdeck runs for itself (hidden from the jobs list and the feed) before it resolves. */
  internalJid(): Promise<string>
}

/** One request as read: per asked minion, its os_family and its key indexes (null: no package list). */
export interface ReadBatch {
  ids: string[]
  fams: (string | null)[]
  sets: (Int32Array | null)[]
}

/** Yields the requests' results in order. */
export interface BatchReader {
  next(): Promise<ReadBatch>
  close(): void
  /** Whether a worker reads the answers. */
  readonly threaded: boolean
}

/** A reader for these batches: the worker when wanted and it starts, else the main thread. */
export async function openReader(rt: ReaderWiring, batches: string[][], cat: PackageCatalog, window: number): Promise<BatchReader> {
  return (rt.worker && (await workerReader(rt, batches, cat, window))) || inlineReader(rt, batches, cat)
}

/** Reads the answer body into a scanner as it arrives. */
async function scanAnswer(res: Response, cat: PackageCatalog): Promise<ScannedSets> {
  const scanner = new PkgAnswerScanner(cat)
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) scanner.push(chunk)
    return scanner.end()
  } catch (e) {
    if (e instanceof SyntaxError) throw new SaltRejected('unreadable answer', res.status)
    throw e
  }
}

/** Reads on the main thread; the next request goes out when salt has answered this one. */
function inlineReader(rt: ReaderWiring, batches: string[][], cat: PackageCatalog): BatchReader {
  const ask = (ids: string[]) => {
    // Each jid is marked before its job is published.
    const jids = Promise.all([rt.internalJid(), rt.internalJid()])
    jids.catch(() => {}) // handled below, in turn; not an unhandled rejection meanwhile
    const fams = jids.then(([jid]) => rt.client.local(ids, 'grains.get', { arg: ['os_family'], tgt_type: 'list', jid }))
    const answer = jids.then(([, jid]) => rt.client.localAnswer(ids, 'pkg.list_pkgs', { kwarg: LIST_PKGS_KWARG, tgt_type: 'list', jid }))
    // Awaited later; a failure must not count as unhandled meanwhile.
    fams.catch(() => {})
    answer.catch(() => {})
    return { ids, fams, answer }
  }
  let b = 0
  let next = batches.length ? ask(batches[0]!) : null
  return {
    threaded: false,
    async next() {
      const cur = next!
      const res = await cur.answer
      next = ++b < batches.length ? ask(batches[b]!) : null
      const sets = await scanAnswer(res, cat)
      const f = (await cur.fams) ?? {}
      return { ids: cur.ids, fams: cur.ids.map((m) => (typeof f[m] === 'string' ? (f[m] as string) : null)), sets: cur.ids.map((m) => sets.get(m) ?? null) }
    },
    close() {
      void next?.answer.then((r) => r.body?.cancel(), () => {})
    },
  }
}

const WORKER_URL = workerUrl(import.meta.url, 'features/inventory/read-worker.ts')

/** Reads in the worker, up to `window` batches ahead of the writer; null when the worker does not start. */
async function workerReader(rt: ReaderWiring, batches: string[][], cat: PackageCatalog, window: number): Promise<BatchReader | null> {
  let w: Worker
  try {
    w = new Worker(WORKER_URL)
  } catch {
    return null
  }
  const post = (m: ToWorker) => w.postMessage(m)
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000)
    w.onmessage = (ev: MessageEvent<FromWorker>) => (clearTimeout(timer), resolve(ev.data.type === 'ready'))
    w.onerror = () => (clearTimeout(timer), resolve(false))
    post({ type: 'init', creds: rt.client.credentials(), tuning: rt.client.tuning })
  })
  if (!ready) {
    w.terminate()
    rt.log.warn('inventory reading worker did not start; reading on the main thread')
    return null
  }
  const results = new Map<number, FromWorker>()
  let failure: Error | null = null
  let wake: (() => void) | null = null
  w.onmessage = (ev: MessageEvent<FromWorker>) => {
    if (ev.data.type !== 'ready') results.set(ev.data.seq, ev.data)
    wake?.()
  }
  w.onerror = (ev) => {
    failure = new Error(`inventory reading worker failed: ${ev.message}`)
    wake?.()
  }
  let asked = 0
  // Batches reach the worker in seq order: it numbers the catalog keys it adds in the order it reads batches, and
  // next() translates them in seq order. Marking jids is a database round trip whose answers may come back in any
  // order (PostgreSQL's pool), so each post waits for the one before it.
  let posted: Promise<void> = Promise.resolve()
  // The batch goes to the worker once its jids are marked; the answers are taken by seq, whatever order they come in.
  const ask = () => {
    if (asked >= batches.length) return
    const seq = asked
    const ids = batches[asked++]!
    const jids = Promise.all([rt.internalJid(), rt.internalJid()])
    posted = posted.then(() => jids).then((j) => post({ type: 'batch', seq, ids, jids: j }), (e: unknown) => {
      failure = e instanceof Error ? e : new Error(String(e))
      wake?.()
    })
  }
  for (let i = 0; i < window; i++) ask()
  // Worker key index → writer catalog key index.
  let xlate = new Int32Array(1024)
  let known = 0
  let seq = 0
  return {
    threaded: true,
    async next() {
      while (!results.has(seq)) {
        if (failure) throw failure
        await new Promise<void>((r) => (wake = r))
      }
      const m = results.get(seq)!
      results.delete(seq)
      const ids = batches[seq++]!
      ask()
      if (m.type === 'error') throw workerError(m)
      if (m.type !== 'batch') throw new Error('inventory reading worker answered out of turn')
      for (const [name, version, arch] of m.keys) {
        if (known === xlate.length) xlate = grow(xlate, known + 1)
        xlate[known++] = cat.keyOf(name, version, arch)
      }
      for (const s of m.sets) if (s) for (let i = 0; i < s.length; i++) s[i] = xlate[s[i]!]!
      return { ids, fams: m.fams, sets: m.sets }
    },
    close() {
      w.terminate()
    },
  }
}

/** The error a worker reported, as the salt client would have thrown it on this thread. */
function workerError(m: { kind: string | null; status: number | null; detail: string }): Error {
  if (m.kind === 'unavailable') return new SaltUnavailable(m.detail)
  if (m.kind === 'rejected') return new SaltRejected(m.detail, m.status ?? 502)
  return new Error(m.detail)
}
