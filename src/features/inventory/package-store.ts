/**
 * The inventory's reads (and the source-package learning writes) over package_stats, package_versions, package_keys
 * and minion_package_sets: the package list and its versions, one minion's packages, the keys a version query starts
 * from. The writer's SQL is in set-store.ts and, per engine, flush-sqlite.ts and flush-postgres.ts; the holder
 * index's reads in holder-store.ts.
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { twin } from '../../db/engine'
import type { Row } from '../../db/row'
import { untilCommit } from '../../db/until-commit'
import { minionPackageSets as sets, packageKeyGeneration as gen, packageKeys as keys, packageStats as stats, packageVersions as versions } from '../../db/schema'

const ALL = ''

/** The inventory generation: moved by every writer flush (package_stats and the sets change only there). */
export async function inventoryGeneration(q: Queryable): Promise<number> {
  return (await q.row<Pick<Row<typeof gen>, 'generation'>>(sql`SELECT ${gen.generation} FROM ${gen} WHERE ${gen.id} = 1`))?.generation ?? 0
}

/** The inventory generation as a request reads it: kept until the next commit (db/until-commit.ts). */
export const currentGeneration = untilCommit(inventoryGeneration)

/** `column` contains `pattern` (containsPattern's, `\` escaping): LIKE ignores ASCII case on SQLite, so PostgreSQL uses ILIKE. */
export function likeContains(q: Queryable, column: SQL | SQL.Aliased | object, pattern: string): SQL {
  return twin(q, {
    sqlite: sql`${column} LIKE ${pattern} ESCAPE '\\'`,
    postgres: sql`${column} ILIKE ${pattern} ESCAPE '\\'`,
  })
}

/** The package list's filter: one source ('' is every source), optionally names containing a pattern. */
function statsWhere(q: Queryable, source: string, pattern?: string): SQL {
  return pattern ? sql`WHERE ${stats.source} = ${source} AND ${likeContains(q, stats.name, pattern)}` : sql`WHERE ${stats.source} = ${source}`
}

/** Sort keys of the package list. */
export const PACKAGE_SORTS = ['name', 'minion_count', 'version_count', 'last_seen'] as const
type Sort = (typeof PACKAGE_SORTS)[number]

/** How many package names match the list's filter. */
export async function countPackageNames(q: Queryable, source: string, pattern?: string): Promise<number> {
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${stats} ${statsWhere(q, source, pattern)}`))!.n
}

/** One page of the package list. */
export async function packageNamePage(q: Queryable, p: { source: string; pattern?: string; sort: Sort; order: 'asc' | 'desc'; limit: number; offset: number }) {
  return q.rows<Pick<Row<typeof stats>, 'name' | 'minion_count' | 'version_count' | 'last_seen'>>(sql`SELECT ${PAGE_COLUMNS} FROM ${stats} ${statsWhere(q, p.source, p.pattern)} ORDER BY ${orderOf(p.sort, p.order)} LIMIT ${limitOf(p.limit)} OFFSET ${p.offset}`)
}

/** The package list's columns. */
const PAGE_COLUMNS = sql`${stats.name}, ${stats.minionCount}, ${stats.versionCount}, ${stats.lastSeen}`

/** The package list's ORDER BY per sort and direction, each one fragment (so a statement holding it stays flat). */
const ORDERS = Object.fromEntries(PACKAGE_SORTS.map((sort) => {
  const col = { name: stats.name, minion_count: stats.minionCount, version_count: stats.versionCount, last_seen: stats.lastSeen }[sort]
  const by = (dir: 'ASC' | 'DESC') => (sort === 'name' ? sql`${stats.name} ${sql.raw(dir)}` : sql`${col} ${sql.raw(dir)}, ${stats.name} ASC`)
  return [sort, { asc: by('ASC'), desc: by('DESC') }]
})) as Record<Sort, Record<'asc' | 'desc', SQL>>
const orderOf = (sort: Sort, order: 'asc' | 'desc') => ORDERS[sort][order]

/** The sources that hold a name (from package_stats' name index; the all-sources row left out). */
export async function sourcesOfName(q: Queryable, name: string): Promise<string[]> {
  return (await q.rows<{ source: string }>(sql`SELECT ${stats.source} FROM ${stats} WHERE ${stats.name} = ${name} AND ${stats.source} <> ${ALL}`)).map((r) => r.source)
}

/** The version rows of a name, most common first; one source, or every source holding the name. */
export async function versionRows(q: Queryable, name: string, source?: string) {
  // package_versions is keyed by source first: the sources holding the name come from package_stats' name index.
  const inSource = source
    ? sql`${versions.source} = ${source}`
    : sql`${versions.source} IN (SELECT ${stats.source} FROM ${stats} WHERE ${stats.name} = ${name} AND ${stats.source} <> ${ALL})`
  return q.rows<Pick<Row<typeof versions>, 'version' | 'arch' | 'source' | 'minion_count'>>(
    sql`SELECT ${versions.version}, ${versions.arch}, ${versions.source}, ${versions.minionCount} FROM ${versions}
      WHERE ${versions.name} = ${name} AND ${inSource} ORDER BY ${versions.minionCount} DESC, ${versions.version}, ${versions.arch}, ${versions.source}`,
  )
}

/** The versions of a name in one source that some minion holds. */
export async function heldVersions(q: Queryable, source: string, name: string) {
  return q.rows<Pick<Row<typeof versions>, 'version' | 'arch'>>(
    sql`SELECT ${versions.version}, ${versions.arch} FROM ${versions} WHERE ${versions.source} = ${source} AND ${versions.name} = ${name} AND ${versions.minionCount} > 0`,
  )
}

/** The package_keys id of a (name, version, arch). */
export async function keyIdOf(q: Queryable, name: string, version: string, arch: string): Promise<number | undefined> {
  return (await q.row<Pick<Row<typeof keys>, 'id'>>(sql`SELECT ${keys.id} FROM ${keys} WHERE ${keys.name} = ${name} AND ${keys.version} = ${version} AND ${keys.arch} = ${arch}`))?.id
}

/** The held package names built from source package `name` under another name, by name. */
export async function binaryNames(q: Queryable, name: string): Promise<string[]> {
  return (await q.rows<Pick<Row<typeof keys>, 'name'>>(
    sql`SELECT DISTINCT ${keys.name} FROM ${keys} WHERE ${keys.sourceName} = ${name} AND ${keys.name} <> ${name} ORDER BY ${keys.name}`,
  )).map((r) => r.name)
}

/** One minion's stored set: its source, when it was collected, and its key ids blob. */
export async function packageSetOf(q: Queryable, minionId: string) {
  return q.row<Pick<Row<typeof sets>, 'source' | 'collected_at' | 'keys' | 'salt_source'>>(
    sql`SELECT ${sets.source}, ${sets.collectedAt}, ${sets.keys}, ${sets.saltSource} FROM ${sets} WHERE ${sets.minionId} = ${minionId}`,
  )
}

/**
 * `column IN` the values (ids, unless `type` says text) of a JSON array: a set's ids travel as one parameter (not one per id), so the statement's text
 * stays the same whatever the set's size.
 */
export function inJsonIds(q: Queryable, column: object, json: string, type: 'bigint' | 'text' = 'bigint'): SQL {
  return twin(q, {
    sqlite: sql`${column} IN (SELECT value FROM json_each(${json}))`,
    // Typed text first: a parameter PostgreSQL types as jsonb, Bun.sql would encode as JSON again (a scalar string).
    postgres: type === 'text'
      ? sql`${column} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`
      : sql`${column} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb)::bigint)`,
  })
}

/** The keys among the ids of a JSON array, optionally names containing a pattern: the count and one page by name. */
export async function keysPage(q: Queryable, idsJson: string, p: { pattern?: string; limit: number; offset: number }) {
  const where = p.pattern ? sql`WHERE ${inJsonIds(q, keys.id, idsJson)} AND ${likeContains(q, keys.name, p.pattern)}` : sql`WHERE ${inJsonIds(q, keys.id, idsJson)}`
  const total = (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${keys} ${where}`))!.n
  const rows = await q.rows<Pick<Row<typeof keys>, 'name' | 'version' | 'arch'>>(
    sql`SELECT ${keys.name}, ${keys.version}, ${keys.arch} FROM ${keys} ${where} ORDER BY ${keys.name}, ${keys.version}, ${keys.arch} LIMIT ${limitOf(p.limit)} OFFSET ${p.offset}`,
  )
  return { total, rows }
}

/** Whether a minion's set was collected at or after `since`. */
export async function collectedSince(q: Queryable, minionId: string, since: number): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS one FROM ${sets} WHERE ${sets.minionId} = ${minionId} AND ${sets.collectedAt} >= ${since}`))
}

/** Keys whose source package is unknown and was not tried since `before`. */
export async function keysWithoutSource(q: Queryable, before: number) {
  return q.rows<Pick<Row<typeof keys>, 'id' | 'name'>>(
    sql`SELECT ${keys.id}, ${keys.name} FROM ${keys} WHERE ${keys.sourceName} IS NULL AND (${keys.sourceTriedAt} IS NULL OR ${keys.sourceTriedAt} < ${before})`,
  )
}

/** Records a key's learned source package. */
export async function setKeySource(q: Queryable, id: number, source: string, at: number) {
  await q.exec(sql`UPDATE ${keys} SET source_name = ${source}, source_tried_at = ${at} WHERE ${keys.id} = ${id}`)
}

/** Records that a key's source was asked for and not learned. */
export async function setKeyTried(q: Queryable, id: number, at: number) {
  await q.exec(sql`UPDATE ${keys} SET source_tried_at = ${at} WHERE ${keys.id} = ${id} AND ${keys.sourceName} IS NULL`)
}

/** The sets collected through a salt source (optionally of one package source): their collection time and key ids. */
export function setsThrough(q: Queryable, saltSource: string, source?: string) {
  const only = source === undefined ? sql.empty() : sql` AND ${sets.source} = ${source}`
  return q.rows<Pick<Row<typeof sets>, 'collected_at' | 'keys'>>(
    sql`SELECT ${sets.collectedAt}, ${sets.keys} FROM ${sets} WHERE ${sets.saltSource} = ${saltSource}${only}`,
  )
}
