/**
 * Keeps the search index current while the service runs. SQLite: on a worker thread (search-worker.ts) when the
 * database is a file, so indexing runs on another core beside the event ingest; on the main thread every 2 s otherwise
 * (in-memory databases in tests, or a worker that does not start). PostgreSQL: a step every second on the main thread
 * (the database does the work), until the queue is empty; every instance runs it, each step taking ids no other holds.
 */
import type { Database } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { syncSearchIndex } from './search-index-sqlite'
import { syncSearchIndexPostgres } from './search-index-postgres'
import type { FromSearchWorker, ToSearchWorker } from './search-worker'
import { startWorker, stopWorker, workerUrl } from '../../lib/worker-thread'

const WORKER_URL = workerUrl(import.meta.url, 'features/activity/search-worker.ts')

const IDLE_MS = 1000
/** Events per PostgreSQL step: one transaction of the database's work, a fraction of a second. */
const PG_STEP = 20_000
const INLINE_MS = 2000
/** SQLite's default autocheckpoint, back on the main connection when the worker stops. */
const AUTOCHECKPOINT_PAGES = 1000

/** The running indexer. */
export class SearchIndexer {
  private worker: Worker | null = null
  private timer: ReturnType<typeof setInterval> | undefined
  private starting: Promise<void> | null = null
  /** Whether a worker thread does the indexing. */
  threaded = false

  constructor(private deps: AppDeps) {}

  /** Starts the worker, or the main-thread fallback. */
  start(): Promise<void> {
    // A stop during the start waits for it, so no worker is left running after the service has closed the database.
    this.starting ??= this.open().finally(() => (this.starting = null))
    return this.starting
  }

  /** The SQLite connection; null on PostgreSQL. */
  private get client(): Database | null {
    const n = this.deps.db.native
    return n.engine === 'sqlite' ? n.client : null
  }

  private async open() {
    const client = this.client
    if (!client) {
      this.timer = setInterval(() => void this.syncPostgres(), IDLE_MS)
      return
    }
    const path = client.filename
    if (path && path !== ':memory:' && (await this.openWorker(path))) return
    this.timer = setInterval(() => this.syncInline(), INLINE_MS)
  }

  /** Whether a PostgreSQL step is running (a slow one is not overlapped by the next tick). */
  private busy = false

  private async syncPostgres() {
    if (this.busy) return
    this.busy = true
    try {
      // Full steps mean more is queued: go on at once, as the SQLite worker does.
      while ((await syncSearchIndexPostgres(this.deps.db, PG_STEP)) === PG_STEP && this.timer !== undefined);
    } catch (e) {
      this.deps.log.warn('search indexing failed', { error: (e as Error).message })
    } finally {
      this.busy = false
    }
  }

  private syncInline() {
    try {
      syncSearchIndex(this.client!)
    } catch (e) {
      this.deps.log.warn('search indexing failed', { error: (e as Error).message })
    }
  }

  private async openWorker(path: string): Promise<boolean> {
    const log = this.deps.log
    const onMessage = (m: FromSearchWorker) => m.type === 'error' && log.warn('search indexing failed', { error: m.detail })
    this.worker = await startWorker(WORKER_URL, { type: 'start', path, idleMs: IDLE_MS } satisfies ToSearchWorker, onMessage, log, 'search index')
    this.threaded = this.worker !== null
    // The worker checkpoints the WAL after each slice, off the main thread (search-worker.ts).
    if (this.threaded) this.client!.exec('PRAGMA wal_autocheckpoint = 0')
    return this.threaded
  }

  /** Stops indexing; the worker closes its connection before the service checkpoints the database. */
  async stop() {
    await this.starting
    clearInterval(this.timer)
    this.timer = undefined
    // A PostgreSQL step under way finishes before the service closes the database.
    while (this.busy) await Bun.sleep(10)
    const w = this.worker
    if (!w) return
    this.worker = null
    await stopWorker(w)
    this.client!.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
  }
}
