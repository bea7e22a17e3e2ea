/**
 * An import's row writes on PostgreSQL, set-based: a staging batch's records, entries and withdrawn ids, and the
 * touched records' package lists, each sent as a few statements over JSON row sets (jsonb_to_recordset, in chunks of
 * findings-postgres.ts's CHUNK) instead of a statement per row; SQLite runs feed-store.ts's prepared statements.
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { vulnAffected as affected, vulnRecords as records } from '../../db/schema'
import type { StagingTables } from './feed-staging'
import { chunked } from './findings-postgres'
import { jsonRows } from '../../db/json-rows'

/** A staged record's row. */
export interface StagedRecord {
  id: string
  aliases: string
  summary: string
  details: string
  severity: string
  score: number | null
  published: string | null
  modified: string | null
}

/** A staged affected entry's row. */
export interface StagedEntry {
  ecosystem: string
  package: string
  vuln_id: string
  ranges: string
  versions: string
}

/** One staging batch, each row once: ids whose earlier batches' entries go, records, entries, withdrawn ids. */
export interface StagedBatch {
  dropEntriesOf: string[]
  records: StagedRecord[]
  entries: StagedEntry[]
  withdrawn: string[]
}

/** Writes one staging batch: the dropped entries first, then the rows (upserts: a later import file's record wins). */
export async function postgresStageBatch(tx: Queryable, t: StagingTables, b: StagedBatch) {
  await chunked(b.dropEntriesOf, (json) => tx.exec(sql`DELETE FROM ${t.affected} WHERE vuln_id IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`))
  await chunked(b.records, (json) => tx.exec(sql`INSERT INTO ${t.records} (id, aliases, summary, details, severity, score, published, modified)
    SELECT x.id, x.aliases, x.summary, x.details, x.severity, x.score, x.published, x.modified
    FROM jsonb_to_recordset(${json}::text::jsonb) AS x(id text, aliases text, summary text, details text, severity text, score double precision, published text, modified text)
    ON CONFLICT (id) DO UPDATE SET aliases = excluded.aliases, summary = excluded.summary, details = excluded.details, severity = excluded.severity,
      score = excluded.score, published = excluded.published, modified = excluded.modified`))
  await chunked(b.entries, (json) => tx.exec(sql`INSERT INTO ${t.affected} (ecosystem, package, vuln_id, ranges, versions)
    SELECT x.ecosystem, x.package, x.vuln_id, x.ranges, x.versions FROM jsonb_to_recordset(${json}::text::jsonb) AS x(ecosystem text, package text, vuln_id text, ranges text, versions text)
    ON CONFLICT (vuln_id, ecosystem, package) DO UPDATE SET ranges = excluded.ranges, versions = excluded.versions`))
  await chunked(b.withdrawn, (json) => tx.exec(sql`INSERT INTO ${t.withdrawn} (id) SELECT jsonb_array_elements_text(${json}::text::jsonb) ON CONFLICT DO NOTHING`))
}

/** The entries of the records `ids` (package and ranges), in record, ecosystem and package order. */
export async function postgresEntriesOf(tx: Queryable, ids: string[]) {
  return tx.rows<{ vuln_id: string; package: string; ranges: string }>(
    sql`SELECT ${affected.vulnId}, ${affected.package}, ${affected.ranges} FROM ${affected} WHERE ${affected.vulnId} IN (SELECT jsonb_array_elements_text(${jsonRows(ids)}::text::jsonb))
      ORDER BY ${affected.vulnId}, ${affected.ecosystem}, ${affected.package}`,
  )
}

/** Writes records' package lists and fixed versions. */
export async function postgresDescribe(tx: Queryable, rows: { id: string; p: string; f: string }[]) {
  await chunked(rows, (json) => tx.exec(sql`UPDATE ${records} SET packages = x.p, fixed_versions = x.f FROM jsonb_to_recordset(${json}::text::jsonb) AS x(id text, p text, f text)
    WHERE ${records.id} = x.id`))
}
