/**
 * The activity search index's storage (contract §6 `search`): an FTS5 trigram table in its own file, `search.db`
 * beside the database, attached to each connection as schema `search`. Its own file has its own write lock, so a
 * worker thread can index while the main thread stores events: in the same file, indexing would hold the one write
 * lock and the event ingest would wait for it. Its DDL lives here with the rest of the schema; keeping it current is
 * the activity feature's (features/activity/search-index-sqlite.ts).
 */
import type { Database } from 'bun:sqlite'
import { dirname, join } from 'node:path'
import { chmodSync } from 'node:fs'

/** The search file of a database file; ':memory:' for an in-memory database (tests). */
export function searchPath(db: Database): string {
  const f = db.filename
  return !f || f === ':memory:' ? ':memory:' : join(dirname(f), 'search.db')
}

/** Attaches `search.db` as schema `search` and creates its tables when new. */
export function attachSearchIndex(db: Database): void {
  const path = searchPath(db)
  db.query('ATTACH DATABASE ?1 AS search').run(path)
  if (path !== ':memory:') {
    db.exec('PRAGMA search.journal_mode = WAL')
    chmodSync(path, 0o600)
  }
  // Contentless: searches need rowids only, and the index holds no second copy of the text. contentless_delete lets
  // pruned rows leave by rowid. A higher automerge merges segments less often: cheaper inserts, slightly more segments.
  const fresh = !db.query("SELECT 1 FROM search.sqlite_master WHERE name = 'activity_fts'").get()
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS search.activity_fts USING fts5(summary, minion_id, fun, initiator, target,
    content='', contentless_delete=1, tokenize='trigram')`)
  if (fresh) db.exec("INSERT INTO search.activity_fts (activity_fts, rank) VALUES ('automerge', 16)")
  // watermark: every event id up to it is indexed. low: ids under it were pruned and removed from the index.
  db.exec('CREATE TABLE IF NOT EXISTS search.search_state (id INTEGER PRIMARY KEY CHECK (id = 1), watermark INTEGER NOT NULL, low INTEGER NOT NULL)')
  db.exec('INSERT OR IGNORE INTO search.search_state (id, watermark, low) VALUES (1, 0, 0)')
}
