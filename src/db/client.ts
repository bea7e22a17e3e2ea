/** Opens the SQLite database with the pragmas Saltdeck relies on and wraps it in drizzle. */
import { Database } from 'bun:sqlite'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'

/** The drizzle database handle used by every service. */
export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

/** Opens `path` (or ':memory:') in WAL mode with busy_timeout, foreign keys and synchronous=NORMAL. */
export function openDb(path: string): Db {
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA busy_timeout = 5000')
  sqlite.exec('PRAGMA foreign_keys = ON')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  // A 32 MB page cache; no memory map: mapped pages counted ~23 MB of serving RSS for no measured speed (bench/RESULTS.md).
  sqlite.exec('PRAGMA cache_size = -32000')
  sqlite.exec('PRAGMA temp_store = MEMORY')
  return drizzle(sqlite, { schema }) as Db
}
