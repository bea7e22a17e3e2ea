/**
 * Keeping SQLite's activity search index (contract §6 `search`; an FTS5 trigram index in search.db) current, and how
 * far behind it is; PostgreSQL searches activity_events with pg_trgm and has no index to keep. The index itself, its
 * file and its tables, is storage: db/search-index.ts attaches it. The index is derived data: when the file is missing,
 * or indexes ids the database never issued (a restored backup), it is rebuilt from the events.
 */
import { Database } from 'bun:sqlite'
import { attachSearchIndex } from '../../db/search-index'

/** The highest event id the database ever issued (AUTOINCREMENT keeps it in sqlite_sequence). */
const ISSUED = "coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = 'activity_events'), 0)"

/**
 * One step of keeping the index current, in one transaction on `search`: removes pruned events, then indexes up to
 * `limit` events past the watermark. Returns how many it indexed. `db` is any connection with the index attached.
 */
export function syncSearchIndex(db: Database, limit = 50_000): number {
  let n = 0
  db.transaction(() => {
    const s = db.query<{ watermark: number; low: number }, []>('SELECT watermark, low FROM search.search_state').get()!
    const issued = db.query<{ n: number }, []>(`SELECT ${ISSUED} AS n`).get()!.n
    if (s.watermark > issued) {
      // Ids the database never issued: the index belongs to another copy of the data. Start over.
      db.exec("INSERT INTO search.activity_fts (activity_fts) VALUES ('delete-all')")
      s.watermark = s.low = 0
    }
    // Retention deletes the oldest events, so what went is (nearly) a prefix of the ids. Rows deleted above the
    // first kept id stay in the index, harmless: a search only returns ids that are still in activity_events.
    const first = db.query<{ id: number | null }, []>('SELECT min(id) AS id FROM main.activity_events').get()!.id ?? issued + 1
    if (first > s.low) {
      db.query('DELETE FROM search.activity_fts WHERE rowid < ?1').run(first)
      s.low = first
    }
    const top = db.query<{ id: number | null; n: number }, [number, number]>(
      'SELECT max(id) AS id, count(*) AS n FROM (SELECT id FROM main.activity_events WHERE id > ?1 ORDER BY id LIMIT ?2)',
    ).get(s.watermark, limit)!
    if (top.id) {
      db.query(`INSERT INTO search.activity_fts (rowid, summary, minion_id, fun, initiator, target)
        SELECT id, summary, minion_id, fun, initiator, target FROM main.activity_events WHERE id > ?1 AND id <= ?2`).run(s.watermark, top.id)
      s.watermark = top.id
      n = top.n
    }
    db.query('UPDATE search.search_state SET watermark = ?1, low = ?2').run(s.watermark, s.low)
  })()
  return n
}

/** The indexer thread's own connection to the database at `path`, with the index attached. */
export function openSearchConnection(path: string): Database {
  const db = new Database(path, { strict: true })
  db.exec('PRAGMA busy_timeout = 5000')
  attachSearchIndex(db)
  return db
}

/** Copies the WAL into the database without waiting for the writer (PASSIVE): the indexer thread's checkpoint. */
export function checkpoint(db: Database): void {
  db.exec('PRAGMA main.wal_checkpoint(PASSIVE)')
}

/** Events stored but not yet in the index (for /metrics). */
export function searchPending(db: Database): number {
  return db.query<{ n: number }, []>(
    `SELECT max(${ISSUED} - (SELECT watermark FROM search.search_state), 0) AS n`,
  ).get()!.n
}
