/** The SQLite engine: bun:sqlite underneath, statements prepared once per kept rendering, transactions on its one connection. */
import type { Database as SqliteClient, Statement } from 'bun:sqlite'
import type { SQL } from 'drizzle-orm'
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import type { Engine, Native, Queryable } from './engine'
import { keptRenderer, type Rendered } from './render'
import { renderFast } from './render-walk'
import { commitEpoch } from './commit-epoch'

const dialect = new SQLiteSyncDialect()
const mark = () => '?'

/**
 * Renders a statement as SQLite text and its parameters: a place's text kept after its first rendering (render.ts), that
 * rendering by render-walk.ts's walk, or drizzle's renderer for what the walk leaves.
 */
export const renderSqlite = keptRenderer((q) => renderFast(q, mark) ?? dialect.sqlToQuery(q))

/** Statements prepared per connection beyond which the cache starts again (each holds SQLite memory; a store's working set is far fewer). */
const MAX_STATEMENTS = 512
/**
 * Statements longer than this are prepared for one run and freed: a multi-row write of hundreds of rows compiles to a
 * program of hundreds of kilobytes, and its row counts vary, so keeping them would hold memory for little.
 */
const MAX_KEPT_TEXT = 8192

/**
 * Runs a rendered statement on a connection with a prepared statement: kept by kept rendering (render.ts: one lookup
 * by object) or else by text. Not bun:sqlite's query(): its cache holds 20 statements, fewer than a request and an
 * ingest batch use between them, so under load a request's statements were compiled again on every call; and its
 * lookup hashes the whole text.
 */
function statements(client: SqliteClient) {
  let cache = new Map<unknown, Statement>()
  return <T>(r: Rendered, use: (s: Statement) => T): T => {
    const key = r.kept ?? r.sql
    let s = cache.get(key)
    if (s) return use(s)
    if (r.sql.length > MAX_KEPT_TEXT) {
      const once = client.prepare(r.sql)
      try {
        return use(once)
      } finally {
        once.finalize()
      }
    }
    if (cache.size >= MAX_STATEMENTS) {
      // Every use of a statement is synchronous (prepared, run, done), so none is in use while the cache is dropped.
      for (const old of cache.values()) old.finalize()
      cache = new Map()
    }
    s = client.prepare(r.sql)
    cache.set(key, s)
    return use(s)
  }
}

/** Runs statements on `client` directly (inside or outside a transaction; the caller decides which). */
function direct(client: SqliteClient): Queryable {
  const native: Native = { engine: 'sqlite', client }
  const run = statements(client)
  return {
    engine: 'sqlite',
    native,
    rows: <T>(q: SQL) => {
      const r = renderSqlite(q)
      return Promise.resolve(run(r, (s) => s.all(...(r.params as never[])) as T[]))
    },
    row: <T>(q: SQL) => {
      const r = renderSqlite(q)
      return Promise.resolve(run(r, (s) => (s.get(...(r.params as never[])) ?? undefined) as T | undefined))
    },
    exec: (q: SQL) => {
      const r = renderSqlite(q)
      return Promise.resolve(run(r, (s) => s.run(...(r.params as never[])).changes))
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
    // Straight to the connection when no transaction is open (no closure to make: these are every request's calls).
    rows: (q) => (open ? after(() => inner.rows(q)) : inner.rows(q)),
    row: (q) => (open ? after(() => inner.row(q)) : inner.row(q)),
    exec: (q) => (open ? after(() => inner.exec(q)) : inner.exec(q)),
    commitEpoch: commitEpoch(client.filename),
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
