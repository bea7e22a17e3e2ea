/** The vulnerability reads (contract §12): records, their affected entries and matches, a minion's findings, the feeds. */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { minionPackageSets as sets, minions, packageKeys as keys, vulnAffected as affected, vulnFeeds as feeds, vulnMatches as matches, vulnMinions as vm, vulnRecords as records } from '../../db/schema'
import { setNum } from '../inventory/holder-store'
import { inJsonIds, likeContains } from '../inventory/package-store'
import { SEVERITY_RANK } from './findings'

/** A record as the lists answer it. */
export type RecordRow = Pick<Row<typeof records>, 'id' | 'aliases' | 'summary' | 'severity' | 'packages' | 'minion_count' | 'fixed_versions'>

/** The orders of the fleet list: worst first (the default), most minions first, or by record id. */
export const VULN_SORTS = ['severity', 'minions', 'id'] as const

/** A record's severity rank in SQL, from SEVERITY_RANK (unknown lowest). */
const RANK_SQL = sql.raw(`CASE severity ${Object.entries(SEVERITY_RANK).map(([s, r]) => `WHEN '${s}' THEN ${r}`).join(' ')} ELSE 0 END`)
const ORDER: Record<(typeof VULN_SORTS)[number], SQL> = {
  // Worst first, then most minions: a "low" record on many minions no longer sits above two "critical" ones.
  severity: sql`${RANK_SQL} DESC, minion_count DESC, id DESC`,
  minions: sql`minion_count DESC, ${RANK_SQL} DESC, id DESC`,
  id: sql`id ASC`,
}

/** The fleet list's filter. */
export interface VulnFilter {
  include_unaffected?: boolean
  severity?: string
  /** A containsPattern over id, aliases and summary. */
  pattern?: string
  package?: string
}

function vulnWhere(q: Queryable, p: VulnFilter): SQL {
  const where: SQL[] = []
  if (!p.include_unaffected) where.push(sql`${records.minionCount} > 0`)
  if (p.severity) where.push(sql`${records.severity} = ${p.severity}`)
  if (p.pattern) where.push(sql`(${likeContains(q, records.id, p.pattern)} OR ${likeContains(q, records.aliases, p.pattern)} OR ${likeContains(q, records.summary, p.pattern)})`)
  // A binary package name reaches the records of its source package too (libssl3 → openssl).
  if (p.package)
    where.push(sql`${records.id} IN (SELECT ${affected.vulnId} FROM ${affected} WHERE ${affected.package} = ${p.package}
      OR ${affected.package} IN (SELECT ${keys.sourceName} FROM ${keys} WHERE ${keys.name} = ${p.package} AND ${keys.sourceName} IS NOT NULL))`)
  return where.length ? sql`WHERE ${sql.join(where, sql` AND `)}` : sql.empty()
}

/** How many records match the filter, and one page of them in the given order. */
export async function vulnPage(q: Queryable, p: VulnFilter & { sort: (typeof VULN_SORTS)[number]; limit: number; offset: number }) {
  const w = vulnWhere(q, p)
  const total = (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${records} ${w}`))!.n
  const rows = await q.rows<RecordRow>(
    sql`SELECT ${records.id}, ${records.aliases}, ${records.summary}, ${records.severity}, ${records.packages}, ${records.minionCount}, ${records.fixedVersions}
      FROM ${records} ${w} ORDER BY ${ORDER[p.sort]} LIMIT ${limitOf(p.limit)} OFFSET ${p.offset}`,
  )
  return { total, rows }
}

/** The counted minions with an ecosystem: number and ecosystem. */
export async function minionEcosystems(q: Queryable) {
  return q.rows<{ num: number; eco: string }>(sql`SELECT ${vm.minionNum} AS num, ${vm.ecosystem} AS eco FROM ${vm} WHERE ${vm.ecosystem} IS NOT NULL`)
}

/** One record, whole. */
export async function recordOf(q: Queryable, id: string) {
  return q.row<Row<typeof records>>(
    sql`SELECT ${records.id}, ${records.aliases}, ${records.summary}, ${records.details}, ${records.severity}, ${records.score}, ${records.published},
      ${records.modified}, ${records.packages}, ${records.fixedVersions}, ${records.minionCount} FROM ${records} WHERE ${records.id} = ${id}`,
  )
}

/** A record's affected entries, by ecosystem and package. */
export async function affectedOf(q: Queryable, id: string) {
  return q.rows<Pick<Row<typeof affected>, 'ecosystem' | 'package' | 'ranges' | 'versions'>>(
    sql`SELECT ${affected.ecosystem}, ${affected.package}, ${affected.ranges}, ${affected.versions} FROM ${affected} WHERE ${affected.vulnId} = ${id}
      ORDER BY ${affected.ecosystem}, ${affected.package}`,
  )
}

/** A record's matched keys with their name and version, by name, version and arch. */
export async function matchesOf(q: Queryable, id: string) {
  return q.rows<Pick<Row<typeof matches>, 'ecosystem' | 'key_id' | 'fixed'> & Pick<Row<typeof keys>, 'name' | 'version'>>(
    sql`SELECT ${matches.ecosystem}, ${matches.keyId}, ${matches.fixed}, ${keys.name}, ${keys.version} FROM ${matches} JOIN ${keys} ON ${keys.id} = ${matches.keyId}
      WHERE ${matches.vulnId} = ${id} ORDER BY ${keys.name}, ${keys.version}, ${keys.arch}`,
  )
}

/** A minion's set and the ecosystem its findings are counted under. */
export async function setAndEcosystem(q: Queryable, minionId: string) {
  return q.row<Pick<Row<typeof sets>, 'keys'> & { eco: string | null }>(
    sql`SELECT ${sets.keys}, ${vm.ecosystem} AS eco FROM ${sets} LEFT JOIN ${vm} ON ${vm.minionNum} = ${setNum(q)} WHERE ${sets.minionId} = ${minionId}`,
  )
}

/** A finding row: one (record, package) of a minion. */
export type FindingRow = Pick<Row<typeof records>, 'id' | 'aliases' | 'summary' | 'severity'> & { package: string; installed: string; fixed: string | null; source_package: string }

/** The findings of the keys of a JSON id list in one ecosystem. */
export async function findingsOf(q: Queryable, ecosystem: string, idsJson: string) {
  return q.rows<FindingRow>(
    sql`SELECT ${matches.vulnId} AS id, ${records.aliases}, ${records.summary}, ${records.severity}, ${keys.name} AS package, ${keys.version} AS installed,
      ${matches.fixed}, ${matches.package} AS source_package
      FROM ${matches} JOIN ${keys} ON ${keys.id} = ${matches.keyId} JOIN ${records} ON ${records.id} = ${matches.vulnId}
      WHERE ${matches.ecosystem} = ${ecosystem} AND ${inJsonIds(q, matches.keyId, idsJson)}`,
  )
}

/** Whether a minion is known, and whether its grains were collected; undefined for an unknown minion. */
export async function minionGrainsCollected(q: Queryable, minionId: string): Promise<boolean | undefined> {
  const r = await q.row<{ grains: number }>(sql`SELECT CASE WHEN ${minions.grains} IS NOT NULL THEN 1 ELSE 0 END AS grains FROM ${minions} WHERE ${minions.id} = ${minionId}`)
  return r && r.grains === 1
}

/** The imported feeds, by ecosystem. */
export async function feedRows(q: Queryable) {
  return q.rows<Row<typeof feeds>>(sql`SELECT ${feeds.ecosystem}, ${feeds.records}, ${feeds.importedAt}, ${feeds.source} FROM ${feeds} ORDER BY ${feeds.ecosystem}`)
}

/** Minions with findings, by their worst severity rank (ordered: PostgreSQL's GROUP BY keeps no order). */
export async function minionsByWorst(q: Queryable) {
  return q.rows<{ worst: number; n: number }>(sql`SELECT ${vm.worst}, count(*) AS n FROM ${vm} WHERE ${vm.vulnCount} > 0 GROUP BY ${vm.worst} ORDER BY ${vm.worst}`)
}
