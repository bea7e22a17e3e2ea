/**
 * An import's staging on SQLite: a scratch database file attached as `vstage`. On disk, not in the connection's temp
 * store (which is memory): a feed's records staged in memory held their whole size (issue 20: 1.9 GB from one zip).
 * It is scratch, thrown away with its directory, so it keeps no journal and never syncs. The touched-ids table is a
 * TEMP table of the connection.
 */
import { sql } from '../../db/sql'
import type { Engine } from '../../db/engine'
import type { FeedStaging, StagingTables } from './feed-staging'

const tables: StagingTables = {
  records: sql.raw('vstage.vuln_stage_records'),
  affected: sql.raw('vstage.vuln_stage_affected'),
  withdrawn: sql.raw('vstage.vuln_stage_withdrawn'),
  touched: sql.raw('temp.vuln_touched'),
}

/** Detaches the staging database when it is attached (after an import, and before one in case a failure left it). */
async function detach(db: Engine) {
  if ((await db.rows<{ name: string }>(sql`PRAGMA database_list`)).some((d) => d.name === 'vstage')) await db.exec(sql`DETACH DATABASE vstage`)
}

/** Attaches a new staging database at `file` with its empty tables (outside any transaction: SQLite cannot attach inside one). */
async function attach(db: Engine, file: string) {
  await detach(db)
  await db.exec(sql`ATTACH DATABASE ${file} AS vstage`)
  for (const s of [
    'PRAGMA vstage.journal_mode = OFF',
    'PRAGMA vstage.synchronous = OFF',
    'PRAGMA vstage.cache_size = -4000',
    `CREATE TABLE vstage.vuln_stage_records (id TEXT PRIMARY KEY, aliases TEXT, summary TEXT, details TEXT, severity TEXT, score REAL,
      published TEXT, modified TEXT)`,
    'CREATE TABLE vstage.vuln_stage_affected (ecosystem TEXT, package TEXT, vuln_id TEXT, ranges TEXT, versions TEXT, PRIMARY KEY (ecosystem, package, vuln_id))',
    'CREATE INDEX vstage.vuln_stage_affected_vuln ON vuln_stage_affected (vuln_id)',
    'CREATE TABLE vstage.vuln_stage_withdrawn (id TEXT PRIMARY KEY)',
    'CREATE TEMP TABLE IF NOT EXISTS vuln_touched (id TEXT PRIMARY KEY)',
    'DELETE FROM temp.vuln_touched',
  ]) await db.rows(sql.raw(s))
}

/** Staging batches and the replacement each in a transaction of their own, the staging database attached meanwhile. */
export const sqliteStaging: FeedStaging = {
  async run(db, file, fn) {
    await attach(db, file)
    try {
      return await fn({ tables, batch: (f) => db.tx(f), replace: (f) => db.tx(f) })
    } finally {
      await detach(db)
    }
  },
}
