/** The SQLite engine: bun:sqlite underneath, statements cached by text, transactions on its one connection. */
import type { Database as SqliteClient } from 'bun:sqlite'
import type { SQL } from 'drizzle-orm'
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import type { Engine, Native, Queryable } from './engine'
import { keptRenderer } from './render'
import { renderFast } from './render-walk'

const dialect = new SQLiteSyncDialect()
const mark = () => '?'

/**
 * Renders a statement as SQLite text and its parameters: a place's text kept after its first rendering (render.ts), that
 * rendering by render-walk.ts's walk, or drizzle's renderer for what the walk leaves.
 */
export const renderSqlite = keptRenderer((q) => renderFast(q, mark) ?? dialect.sqlToQuery(q))

/** Runs statements on `client` directly (inside or outside a transaction; the caller decides which). */
function direct(client: SqliteClient): Queryable {
  const native: Native = { engine: 'sqlite', client }
  // bun:sqlite's query() caches the prepared statement by its text, so a store's statement is compiled once.
  const stmt = (q: SQL) => {
    const r = renderSqlite(q)
    return { s: client.query(r.sql), p: r.params as never[] }
  }
  return {
    engine: 'sqlite',
    native,
    rows: <T>(q: SQL) => {
      const { s, p } = stmt(q)
      return Promise.resolve(s.all(...p) as T[])
    },
    row: <T>(q: SQL) => {
      const { s, p } = stmt(q)
      return Promise.resolve((s.get(...p) ?? undefined) as T | undefined)
    },
    exec: (q: SQL) => {
      const { s, p } = stmt(q)
      return Promise.resolve(s.run(...p).changes)
    },
  }
}

/**
 * How the engine opens a transaction: holding the write lock of the main database only. The lock is taken at the
 * start (a reader turning writer mid-way could fail with SQLITE_BUSY), but not by BEGIN IMMEDIATE: that takes the write lock of every
 * attached database too, search.db among them, whose indexer thread holds it while it indexes or drops a range of
 * rows; the main thread then waited in BEGIN, every request with it (2.6 s at 50,000 minions, bench/RESULTS.md
 * session 12). A write that changes nothing on main takes main's lock alone. sqlite_sequence exists once a table
 * with AUTOINCREMENT does (the first migration makes one); before that, BEGIN IMMEDIATE (nothing is attached yet).
 * Returns the function a transaction begins with.
 */
function mainWriteLock(client: SqliteClient): () => void {
  // Looked up until it exists, then no more: no migration drops the AUTOINCREMENT tables, so it stays.
  let lockable = false
  return () => {
    lockable ||= !!client.query("SELECT 1 AS x FROM main.sqlite_master WHERE name = 'sqlite_sequence'").get()
    if (lockable) beginOnMain(client)
    else client.run('BEGIN IMMEDIATE')
  }
}

/** BEGIN, then a write on main that changes nothing: main's write lock, held until the transaction ends. */
function beginOnMain(client: SqliteClient): void {
  client.run('BEGIN')
  try {
    client.run('DELETE FROM main.sqlite_sequence WHERE 0')
  } catch (e) {
    client.run('ROLLBACK')
    throw e
  }
}

/**
 * The engine over an open bun:sqlite connection. One connection means one transaction at a time: while `tx` is open
 * (its function may await), the engine's own statements and other transactions wait for it to end, so nothing else
 * runs inside it by accident.
 */
export function sqliteEngine(client: SqliteClient): Engine {
  const inner = direct(client)
  const beginWriting = mainWriteLock(client)
  let open: Promise<void> | null = null
  const after = <T>(run: () => Promise<T>): Promise<T> => (open ? open.then(() => after(run)) : run())
  return {
    engine: 'sqlite',
    native: inner.native,
    rows: (q) => after(() => inner.rows(q)),
    row: (q) => after(() => inner.row(q)),
    exec: (q) => after(() => inner.exec(q)),
    tx: <T>(fn: (tx: Queryable) => Promise<T>) =>
      after(async () => {
        let done!: () => void
        open = new Promise<void>((r) => (done = r))
        try {
          beginWriting()
          try {
            const out = await fn(inner)
            client.run('COMMIT')
            return out
          } catch (e) {
            if (client.inTransaction) client.run('ROLLBACK')
            throw e
          }
        } finally {
          open = null
          done()
        }
      }),
    close: () => {
      client.close()
      return Promise.resolve()
    },
  }
}
