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
 * The engine over an open bun:sqlite connection. One connection means one transaction at a time: while `tx` is open
 * (its function may await), the engine's own statements and other transactions wait for it to end, so nothing else
 * runs inside it by accident.
 */
export function sqliteEngine(client: SqliteClient): Engine {
  const inner = direct(client)
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
          // IMMEDIATE takes the write lock at the start: a reader turning writer mid-way could fail with SQLITE_BUSY.
          client.run('BEGIN IMMEDIATE')
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
