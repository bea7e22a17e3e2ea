/**
 * The search indexer's thread: its own connection to the database (read only in practice) with the search index
 * attached, catching the index up with the events while the main thread stores them. Indexing writes search.db only,
 * so it never takes the database's write lock.
 */
import type { Database } from 'bun:sqlite'
import { checkpoint, openSearchConnection, syncSearchIndex } from './search-index-sqlite'

/** Messages from the service. */
export type ToSearchWorker = { type: 'start'; path: string; idleMs: number } | { type: 'stop' }
/** Messages to the service. */
export type FromSearchWorker = { type: 'ready' } | { type: 'error'; detail: string } | { type: 'stopped' }

declare const self: Worker

let db: Database | null = null
let timer: ReturnType<typeof setTimeout> | undefined

/**
 * Indexes a slice, then checkpoints the database's WAL; goes again at once while there is a backlog, else after
 * idleMs. The checkpoint is here, not in the main thread's commits (the service turns its autocheckpoint off while this
 * thread runs): copying a WAL grown by a fast ingest into the database took the main thread hundreds of milliseconds at
 * a time. PASSIVE never waits for the writer, which goes on appending meanwhile.
 */
function tick(idleMs: number) {
  let n = 0
  try {
    n = syncSearchIndex(db!, 20_000)
    checkpoint(db!)
  } catch (e) {
    self.postMessage({ type: 'error', detail: (e as Error).message } satisfies FromSearchWorker)
  }
  timer = setTimeout(() => tick(idleMs), n > 0 ? 0 : idleMs)
}

self.onmessage = (ev: MessageEvent<ToSearchWorker>) => {
  const m = ev.data
  if (m.type === 'start') {
    db = openSearchConnection(m.path)
    self.postMessage({ type: 'ready' } satisfies FromSearchWorker)
    tick(m.idleMs)
    return
  }
  clearTimeout(timer)
  db?.close()
  db = null
  self.postMessage({ type: 'stopped' } satisfies FromSearchWorker)
}
