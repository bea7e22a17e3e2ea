/**
 * `saltdeck migrate-to-postgres --data-dir D --database-url URL`: moves a SQLite install into an empty PostgreSQL
 * database (db/copy-to-postgres.ts) while the service is stopped, and says how to switch over.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Config } from './config'
import { openDb, openPostgres } from './db/client'
import { migrate } from './db/migrate'
import { copyToPostgres, CopyError } from './db/copy-to-postgres'
import { DataDirLocked, lockDataDir } from './db/serve-lock'
import { CommandError } from './commands'

/** The database a URL names, without its password (never printed). */
function withoutPassword(url: string): string {
  const u = new URL(url)
  u.password = ''
  return u.toString()
}

/** Copies the data directory's SQLite database into the PostgreSQL database of `config.databaseUrl`. */
export async function migrateToPostgres(config: Config, print: (s: string) => void): Promise<void> {
  if (!config.databaseUrl) throw new CommandError('--database-url (or SALTDECK_DATABASE_URL) names the PostgreSQL database to copy into')
  const dir = resolve(config.dataDir)
  const file = join(dir, 'saltdeck.db')
  if (!existsSync(file)) throw new CommandError(`no database at ${file}: pass the --data-dir of the SQLite install to move`)
  // The service must be stopped: what it wrote after the copy began would be lost.
  let lock
  try {
    lock = lockDataDir(dir)
  } catch (e) {
    if (e instanceof DataDirLocked) throw new CommandError(`${e.message} before moving the install`)
    throw e
  }
  const src = openDb(file)
  const pg = openPostgres(config.databaseUrl)
  try {
    // The source is brought to the current schema first, as serve would at start: both sides then have the same tables.
    await migrate(src)
    await migrate(pg)
    const t0 = performance.now()
    let last = ''
    const result = await copyToPostgres(src, pg, (table) => {
      if (table !== last) print(`copying ${(last = table)}`)
    })
    const rows = result.reduce((n, r) => n + r.copied, 0)
    for (const r of result) print(`  ${r.table.padEnd(28)} ${String(r.source).padStart(10)} → ${String(r.copied).padStart(10)}`)
    print(`Copied ${rows} rows of ${result.length} tables into ${withoutPassword(config.databaseUrl)} in ${((performance.now() - t0) / 1000).toFixed(1)} s; every count matches.`)
    print(`Start saltdeck with SALTDECK_DATABASE_URL set and the same secret.key (in ${dir}, or SALTDECK_SECRET_KEY_FILE) so the stored secrets stay readable.`)
  } catch (e) {
    if (e instanceof CopyError) throw new CommandError(e.message)
    throw e
  } finally {
    await pg.close()
    src.$client.close()
    lock.release()
  }
}
