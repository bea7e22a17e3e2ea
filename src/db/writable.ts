/**
 * Whether the database can be written: SQLite errors that mean it cannot (read-only, I/O error, cannot open, full),
 * and PostgreSQL's (read-only transaction, disk full, I/O error), the failure last seen, and a probe that writes (SQLite:
 * one header field; PostgreSQL: an UPDATE of no row) so readiness and Salt health see the state now.
 */
import type { Db } from './client'
import { sql } from './sql'
import { packageKeyGeneration } from './schema'

/** The sentence an operator sees while writes fail (contract §17). */
export const NOT_WRITABLE = 'Database not writable'

/** SQLite result codes (extended ones included: SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED…) that mean writes fail. */
const WRITE_FAILURE = /^SQLITE_(READONLY|IOERR|CANTOPEN|FULL|PERM)(_|$)/
/** PostgreSQL's SQLSTATEs for the same: read_only_sql_transaction, disk_full, io_error. */
const PG_WRITE_FAILURE = new Set(['25006', '53100', '58030'])

/** Whether an error is SQLite saying the database cannot be written (not a constraint, a busy lock or a bug). */
export function isWriteFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code
  return e instanceof Error && typeof code === 'string' && (WRITE_FAILURE.test(code) || PG_WRITE_FAILURE.has(code))
}

/** The failure last seen on a database, until a write succeeds. */
export interface WriteFailure {
  since: number
  error: string
}

/** By driver connection (every Db over one SQLite connection shares its state). */
const failures = new WeakMap<object, WriteFailure>()

/** Records a write failure (when `e` is one); returns whether it was. */
export function noteWriteFailure(db: Db, e: unknown, now = Date.now()): boolean {
  if (!isWriteFailure(e)) return false
  const was = failures.get(db.native.client)
  failures.set(db.native.client, { since: was?.since ?? now, error: (e as Error).message })
  return true
}

/**
 * Writes the header's user_version with its own value (a real write transaction, one WAL frame; nothing reads it) to
 * learn whether writes succeed now, and returns the failure, or null when the write succeeded. A lock held by another
 * writer is no answer either way: the last state stays (the probe does not wait for it).
 */
export async function checkWritable(db: Db, now = Date.now()): Promise<WriteFailure | null> {
  if (db.native.engine === 'postgres') {
    try {
      // An UPDATE of no row: refused in a read-only transaction (or on a standby) before it looks for rows, and it
      // locks nothing, so it never waits for a writer.
      await db.exec(sql`UPDATE ${packageKeyGeneration} SET generation = generation WHERE 1 = 0`)
      failures.delete(db.native.client)
    } catch (e) {
      noteWriteFailure(db, e, now)
    }
    return failures.get(db.native.client) ?? null
  }
  const c = db.native.client
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
