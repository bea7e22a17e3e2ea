/**
 * The SQL of an import: the staging writes (into the tables feed-staging-*.ts made) and the replacing transaction's
 * statements over vuln_affected, vuln_records, vuln_matches and vuln_feeds. The logic that orders them is feeds.ts.
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { $, prepare } from '../../db/prepared'
import { packageKeys as keys, vulnAffected as affected, vulnFeeds as feeds, vulnMatches as matches, vulnRecords as records } from '../../db/schema'
import { inJsonIds } from '../inventory/package-store'
import type { StagingTables } from './feed-staging'

/** The staging writes of one batch, prepared uncached: on SQLite they go with the staging database when it is detached. */
export function stagingWrites(tx: Queryable, t: StagingTables) {
  return {
    rec: prepare(tx, sql`INSERT INTO ${t.records} (id, aliases, summary, details, severity, score, published, modified)
      VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, ${$(8)})
      ON CONFLICT (id) DO UPDATE SET aliases = excluded.aliases, summary = excluded.summary, details = excluded.details, severity = excluded.severity,
        score = excluded.score, published = excluded.published, modified = excluded.modified`, { cached: false }),
    dropAff: prepare(tx, sql`DELETE FROM ${t.affected} WHERE vuln_id = ${$(1)}`, { cached: false }),
    aff: prepare(tx, sql`INSERT INTO ${t.affected} (ecosystem, package, vuln_id, ranges, versions) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)})
      ON CONFLICT (ecosystem, package, vuln_id) DO UPDATE SET ranges = excluded.ranges, versions = excluded.versions`, { cached: false }),
    gone: prepare(tx, sql`INSERT INTO ${t.withdrawn} (id) VALUES (${$(1)}) ON CONFLICT DO NOTHING`, { cached: false }),
  }
}

/** The ecosystems the staged entries name. */
export async function stagedEcosystems(tx: Queryable, t: StagingTables): Promise<string[]> {
  return (await tx.rows<{ e: string }>(sql`SELECT DISTINCT ecosystem AS e FROM ${t.affected}`)).map((r) => r.e)
}

/**
 * Replaces the stored entries and records of the ecosystems in `ecoJson` (a JSON list) with the staged ones, noting
 * in the touched table every record whose entries change (it had entries there, is in the import, or was withdrawn),
 * and drops records left with no entry. (SQLite reads `ON CONFLICT` after a SELECT's FROM as a join's ON unless a
 * WHERE comes between.)
 */
export async function replaceEntries(tx: Queryable, t: StagingTables, ecoJson: string) {
  const inEcos = (column: object) => inJsonIds(tx, column, ecoJson, 'text')
  await tx.exec(sql`DELETE FROM ${t.touched}`)
  await tx.exec(sql`INSERT INTO ${t.touched} (id) SELECT DISTINCT ${affected.vulnId} FROM ${affected} WHERE ${inEcos(affected.ecosystem)} ON CONFLICT DO NOTHING`)
  await tx.exec(sql`INSERT INTO ${t.touched} (id) SELECT id FROM ${t.records} UNION SELECT id FROM ${t.withdrawn} WHERE true ON CONFLICT DO NOTHING`)
  await tx.exec(sql`DELETE FROM ${affected} WHERE ${inEcos(affected.ecosystem)}`)
  await tx.exec(sql`DELETE FROM ${affected} WHERE ${affected.vulnId} IN (SELECT id FROM ${t.withdrawn})`)
  await tx.exec(sql`INSERT INTO ${affected} (ecosystem, package, vuln_id, ranges, versions) SELECT ecosystem, package, vuln_id, ranges, versions FROM ${t.affected}`)
  await tx.exec(sql`INSERT INTO ${records} (id, aliases, summary, details, severity, score, published, modified, packages, fixed_versions)
    SELECT id, aliases, summary, details, severity, score, published, modified, '[]', '[]' FROM ${t.records} WHERE true
    ON CONFLICT (id) DO UPDATE SET aliases = excluded.aliases, summary = excluded.summary, details = excluded.details, severity = excluded.severity,
      score = excluded.score, published = excluded.published, modified = excluded.modified`)
  await tx.exec(sql`DELETE FROM ${records} WHERE ${records.id} IN (SELECT id FROM ${t.touched}) AND ${records.id} NOT IN (SELECT ${affected.vulnId} FROM ${affected})`)
}

/** The touched records still stored. */
export async function touchedRecords(tx: Queryable, t: StagingTables): Promise<string[]> {
  return (await tx.rows<{ id: string }>(sql`SELECT id FROM ${t.touched} WHERE id IN (SELECT ${records.id} FROM ${records})`)).map((r) => r.id)
}

/** The statements describing a record: its entries read, its package list and fixed versions written. */
export function describeStatements(tx: Queryable) {
  return {
    entries: prepare(tx, sql`SELECT ${affected.package}, ${affected.ranges} FROM ${affected} WHERE ${affected.vulnId} = ${$(1)} ORDER BY ${affected.ecosystem}, ${affected.package}`),
    put: prepare(tx, sql`UPDATE ${records} SET packages = ${$(2)}, fixed_versions = ${$(3)} WHERE ${records.id} = ${$(1)}`),
  }
}

/** A record's entries as describeStatements reads them. */
export type DescribedEntry = Pick<Row<typeof affected>, 'package' | 'ranges'>

/** Drops every match in the ecosystems of `ecoJson` and of withdrawn records; returns the keys the new entries' packages name. */
export async function clearMatches(tx: Queryable, t: StagingTables, ecoJson: string): Promise<number[]> {
  const inEcos = (column: object) => inJsonIds(tx, column, ecoJson, 'text')
  await tx.exec(sql`DELETE FROM ${matches} WHERE ${inEcos(matches.ecosystem)}`)
  await tx.exec(sql`DELETE FROM ${matches} WHERE ${matches.vulnId} IN (SELECT id FROM ${t.withdrawn})`)
  return (await tx.rows<Pick<Row<typeof keys>, 'id'>>(sql`SELECT ${keys.id} FROM ${keys} WHERE coalesce(${keys.sourceName}, ${keys.name}) IN
    (SELECT DISTINCT ${affected.package} FROM ${affected} WHERE ${inEcos(affected.ecosystem)})`)).map((r) => r.id)
}

/** Records an ecosystem's feed: its record count now, when and from what it was imported; returns the count. */
export async function putFeed(tx: Queryable, ecosystem: string, now: number, source: string): Promise<number> {
  const n = (await tx.row<{ n: number }>(sql`SELECT count(DISTINCT ${affected.vulnId}) AS n FROM ${affected} WHERE ${affected.ecosystem} = ${ecosystem}`))!.n
  await tx.exec(sql`INSERT INTO ${feeds} (ecosystem, records, imported_at, source) VALUES (${ecosystem}, ${n}, ${now}, ${source})
    ON CONFLICT (ecosystem) DO UPDATE SET records = excluded.records, imported_at = excluded.imported_at, source = excluded.source`)
  return n
}
