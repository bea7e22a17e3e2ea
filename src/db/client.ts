/** Opens the SQLite database with the pragmas Saltdeck relies on and wraps it in drizzle. */
import { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import { sql } from './sql'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'
import type { Engine } from './engine'
import { sqliteEngine } from './sqlite'
import { postgresEngine } from './postgres'

/**
 * The database handle every service is handed: the engine (`rows`, `row`, `exec`, `tx`; see engine.ts) on either
 * engine. While the stores move onto the engine, a SQLite handle also carries the drizzle handle and the raw
 * bun:sqlite connection (`$client`) the code not yet moved uses; on PostgreSQL those are absent.
 */
export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database } & Engine

/** Opens `path` (or ':memory:') in WAL mode with busy_timeout, foreign keys and synchronous=NORMAL. */
export function openDb(path: string): Db {
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA busy_timeout = 5000')
  sqlite.exec('PRAGMA foreign_keys = ON')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  // An 8 MB page cache and no memory map: at 50,000 minions a 32 MB cache held ~28 MB more of serving RSS and mapped
  // pages ~23 MB, for no measured speed; the OS page cache keeps the file's hot pages either way (bench/RESULTS.md).
  sqlite.exec('PRAGMA cache_size = -8000')
  sqlite.exec('PRAGMA temp_store = MEMORY')
  return Object.assign(drizzle(sqlite, { schema }), sqliteEngine(sqlite)) as Db
}

/** Opens a pool to a PostgreSQL database (`SALTDECK_DATABASE_URL`); options as postgresEngine takes them. */
export function openPostgres(url: string, opts: { max?: number; idleSeconds?: number } = {}): Db {
  return postgresEngine(url, opts) as Db
}

/** Whether the database answers a trivial query. */
export async function ping(db: Db): Promise<boolean> {
  try {
    // SQLite: on the connection directly, so readiness answers at once even while a long transaction is open (the
    // engine's own statements wait for it to end).
    if (db.native.engine === 'sqlite') db.native.client.query('SELECT 1').get()
    else await db.row(sql`SELECT 1 AS one`)
    return true
  } catch {
    return false
  }
}

/**
 * Size of the database in bytes. SQLite: the file and its WAL (the page count times the page size for an in-memory
 * database). PostgreSQL: pg_database_size of the connected database.
 */
export async function dbSizeBytes(db: Db): Promise<number> {
  if (db.native.engine === 'postgres') return (await db.row<{ n: number }>(sql`SELECT pg_database_size(current_database()) AS n`))?.n ?? 0
  const file = db.native.client.filename
  if (!file || file === ':memory:')
    return (await db.row<{ n: number }>(sql`SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()`))?.n ?? 0
  let n = 0
  for (const f of [file, `${file}-wal`]) {
    try {
      n += statSync(f).size
    } catch {
      // No WAL file right after a checkpoint.
    }
  }
  return n
}

/** Writes the WAL back into the database file and empties it (at a graceful stop); PostgreSQL checkpoints itself. */
export async function checkpoint(db: Db): Promise<void> {
  if (db.native.engine === 'sqlite') await db.exec(sql`PRAGMA wal_checkpoint(TRUNCATE)`)
}

/**
 * What a PostgreSQL database's collation means for Saltdeck: null when it sorts bytewise (C or POSIX, as SQLite
 * sorts text and as the tests' cluster is made), else the sentence to log: lists ordered by text may differ.
 */
export async function collationWarning(db: Db): Promise<string | null> {
  if (db.native.engine !== 'postgres') return null
  const r = await db.row<{ c: string }>(sql`SELECT datcollate AS c FROM pg_database WHERE datname = current_database()`)
  const c = r?.c ?? ''
  if (c === 'C' || c === 'POSIX' || c.startsWith('C.')) return null
  return `the database's collation is ${c}, not C: lists ordered by text may sort differently than on SQLite (create the database with --locale=C, or LC_COLLATE 'C' TEMPLATE template0)`
}

/**
 * Writes a consistent, compact copy to `target`: VACUUM INTO reads the database in one transaction, so the copy is
 * consistent while the service keeps writing (WAL readers do not block writers).
 */
export function backupTo(db: Db, target: string) {
  db.$client.query('VACUUM INTO ?1').run(target)
}
