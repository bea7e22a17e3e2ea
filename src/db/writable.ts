/**
 * Whether the database can be written: the errors of either engine that mean it cannot (SQLite: read-only, I/O error,
 * cannot open, full; PostgreSQL: a read-only transaction or standby, disk full, the server gone or refusing
 * connections), the failure last seen, and a probe that writes so readiness and Salt health see the state now.
 */
import type { Database } from 'bun:sqlite'
import { sql } from './sql'
import type { Db } from './client'
import { packageKeyGeneration } from './schema'

/** The sentence an operator sees while writes fail (contract §17). */
export const NOT_WRITABLE = 'Database not writable'

/** SQLite result codes (extended ones included: SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED…) that mean writes fail. */
const WRITE_FAILURE = /^SQLITE_(READONLY|IOERR|CANTOPEN|FULL|PERM)(_|$)/

/**
 * PostgreSQL's: SQLSTATE 25006 (read-only transaction: a standby, default_transaction_read_only), 53xxx (disk full, out
 * of memory, too many connections), 08xxx (connection exceptions), 57P0x (the server shutting down or starting), which
 * Bun.sql puts in `errno`; and Bun.sql's own codes for a connection refused, lost, failed or timed out.
 */
const PG_WRITE_FAILURE = /^(25006|53\d\d\d|08\d\d\d|57P0[1-4])$/
const PG_CONNECTION_FAILURE = /^ERR_POSTGRES_(CONNECTION_(CLOSED|REFUSED|FAILED|TIMEOUT)|IDLE_TIMEOUT|LIFETIME_TIMEOUT)$/

/** Whether an error is the database saying it cannot be written (not a constraint, a busy lock or a bug). */
export function isWriteFailure(e: unknown): boolean {
  if (!(e instanceof Error)) return false
  const { code, errno } = e as { code?: unknown; errno?: unknown }
  if (typeof code === 'string' && (WRITE_FAILURE.test(code) || PG_CONNECTION_FAILURE.test(code))) return true
  return code === 'ERR_POSTGRES_SERVER_ERROR' && typeof errno === 'string' && PG_WRITE_FAILURE.test(errno)
}

/** The failure last seen on a database, until a write succeeds. */
export interface WriteFailure {
  since: number
  error: string
}

/** Keyed by the driver's client: the raw bun:sqlite database, or the PostgreSQL pool. */
const failures = new WeakMap<object, WriteFailure>()

/** Records a write failure (when `e` is one); returns whether it was. */
export function noteWriteFailure(db: Db, e: unknown, now = Date.now()): boolean {
  if (!isWriteFailure(e)) return false
  const key = db.native.client as object
  const was = failures.get(key)
  failures.set(key, { since: was?.since ?? now, error: (e as Error).message })
  return true
}

/**
 * Probes whether writes succeed now and returns the failure, or null when they do (SQLite: checkWritableSqlite;
 * PostgreSQL: checkWritablePostgres).
 */
export async function checkWritable(db: Db, now = Date.now()): Promise<WriteFailure | null> {
  return db.engine === 'postgres' ? await checkWritablePostgres(db, now) : checkWritableSqlite(db, now)
}

/**
 * PostgreSQL: a transaction with an UPDATE matching no row, which a read-only transaction or a standby refuses before
 * looking at a row (25006), and a transaction id taken (`pg_current_xact_id()`, which a read-only transaction allows),
 * so its commit writes and flushes a WAL record: a full disk fails it. The pool's connection attempt fails when the
 * server is gone. It writes no row and holds no row lock (lock_timeout keeps it from waiting for a migration's).
 */
async function checkWritablePostgres(db: Db, now: number): Promise<WriteFailure | null> {
  const key = db.native.client as object
  try {
    await db.tx(async (tx) => {
      await tx.exec(sql`SET LOCAL lock_timeout = '200ms'`)
      await tx.exec(sql`UPDATE ${packageKeyGeneration} SET generation = generation WHERE false`)
      await tx.exec(sql`SELECT pg_current_xact_id()`)
    })
    failures.delete(key)
  } catch (e) {
    noteWriteFailure(db, e, now)
  }
  return failures.get(key) ?? null
}

/**
 * SQLite: writes the header's user_version with its own value (a real write transaction, one WAL frame; nothing reads it) to
 * learn whether writes succeed now, and returns the failure, or null when the write succeeded. A lock held by another
 * writer is no answer either way: the last state stays (the probe does not wait for it).
 */
function checkWritableSqlite(db: Db, now: number): WriteFailure | null {
  const c = db.$client as Database
  const timeout = c.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()?.timeout ?? 0
  try {
    c.exec('PRAGMA busy_timeout = 0')
    const v = c.query<{ user_version: number }, []>('PRAGMA user_version').get()?.user_version ?? 0
    c.exec(`PRAGMA user_version = ${Number(v) | 0}`)
    failures.delete(c)
  } catch (e) {
    noteWriteFailure(db, e, now)
  } finally {
    try {
      c.exec(`PRAGMA busy_timeout = ${timeout}`)
    } catch {
      /* the connection is closed */
    }
  }
  return failures.get(c) ?? null
}
