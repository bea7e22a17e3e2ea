/**
 * An import's staging on PostgreSQL: temporary tables created inside the import's one transaction and dropped at its
 * commit (`ON COMMIT DROP`), so they live on that transaction's connection only; the staging batches and the
 * replacement are steps of that transaction. Temporary tables spill to disk, so a large feed is not held in memory.
 */
import { sql } from '../../db/sql'
import type { FeedStaging, StagingTables } from './feed-staging'

const tables: StagingTables = {
  records: sql.raw('vuln_stage_records'),
  affected: sql.raw('vuln_stage_affected'),
  withdrawn: sql.raw('vuln_stage_withdrawn'),
  touched: sql.raw('vuln_touched'),
}

/** Staging and the replacement in one transaction, the temporary tables created at its start. */
export const postgresStaging: FeedStaging = {
  run: (db, _file, fn) =>
    db.tx(async (tx) => {
      for (const s of [
        `CREATE TEMP TABLE vuln_stage_records (id TEXT PRIMARY KEY, aliases TEXT, summary TEXT, details TEXT, severity TEXT, score DOUBLE PRECISION,
          published TEXT, modified TEXT) ON COMMIT DROP`,
        // Keyed by record first: the key serves the upsert's conflict target (any order of the same columns) and the
        // delete of a record's earlier entries, with no second index.
        'CREATE TEMP TABLE vuln_stage_affected (ecosystem TEXT, package TEXT, vuln_id TEXT, ranges TEXT, versions TEXT, PRIMARY KEY (vuln_id, ecosystem, package)) ON COMMIT DROP',
        'CREATE TEMP TABLE vuln_stage_withdrawn (id TEXT PRIMARY KEY) ON COMMIT DROP',
        'CREATE TEMP TABLE vuln_touched (id TEXT PRIMARY KEY) ON COMMIT DROP',
      ]) await tx.exec(sql.raw(s))
      return fn({ tables, batch: (f) => f(tx), replace: (f) => f(tx) })
    }),
}
