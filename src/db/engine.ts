/**
 * The storage engine every store talks to: SQLite (bun:sqlite, the default) or PostgreSQL (Bun.sql), behind one
 * async interface. Stores write their SQL with drizzle's `sql` tag over the table definitions in `schema/`; the engine
 * renders it in its own dialect (placeholders, quoting) and runs it. SQL only one engine understands sits beside its
 * twin for the other, chosen with `twin`.
 */
import type { Database as SqliteClient } from 'bun:sqlite'
import type { SQL as BunSQL } from 'bun'
import type { SQL } from 'drizzle-orm'

/** Which engine a handle runs on. */
export type EngineKind = 'sqlite' | 'postgres'

/** What runs a statement: the engine itself, or an open transaction. */
export interface Queryable {
  readonly engine: EngineKind
  /** Every row the statement returns, keyed by column name as the database names it. */
  rows<T>(q: SQL): Promise<T[]>
  /** The first row the statement returns, or undefined. */
  row<T>(q: SQL): Promise<T | undefined>
  /** Runs a statement for its effect; resolves to the number of rows it changed. */
  exec(q: SQL): Promise<number>
  /** The driver underneath, for the per-engine modules that need the engine's own features (FTS5, COPY, bulk paths). */
  readonly native: Native
}

/** Bun.sql's client: the pool, a reserved connection or a transaction's. */
export type PgClient = BunSQL

/**
 * The driver under a handle, by engine. PostgreSQL: the Bun.sql pool (or a transaction's client), and the callbacks
 * that hear each of the pool's connections close (with why).
 */
export type Native =
  | { engine: 'sqlite'; client: SqliteClient }
  | { engine: 'postgres'; client: PgClient; onClose: Set<(e: Error | null) => void> }

/** A database: statements, transactions, and closing it. */
export interface Engine extends Queryable {
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. Everything inside uses the
   * `tx` it is handed: the engine's own handle waits for the transaction to end (SQLite: one connection; PostgreSQL:
   * another connection of the pool would not see the transaction's writes).
   */
  tx<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /**
   * A number that moves whenever something has been committed to the database since the last call, by any connection
   * of any process; null when the engine cannot tell without a statement (PostgreSQL, an in-memory SQLite database).
   * SQLite reads it from the WAL index (commit-epoch.ts).
   */
  commitEpoch(): number | null
  /** Closes the connection(s); statements after it fail. */
  close(): Promise<void>
}

/** The form of a statement (or anything else) for the engine `q` runs on: SQL one engine understands, beside its twin. */
export function twin<T>(q: { readonly engine: EngineKind }, forms: { sqlite: T; postgres: T }): T {
  return forms[q.engine]
}
