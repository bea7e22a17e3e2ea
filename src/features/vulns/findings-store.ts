/**
 * The SQL of findings kept current: vuln_matches, vuln_minions, the records' counts and the findings' generation, and
 * the reads the matcher diffs with. The per-row statements of a flush, a recount and a match are prepared once per
 * connection (db/per-handle.ts); findings-sqlite.ts runs them, findings-postgres.ts has the set-based forms.
 */
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { twin } from '../../db/engine'
import type { Row } from '../../db/row'
import { minionPackageSets as sets, minions, packageKeyGeneration, packageKeys as keys, vulnAffected as affected, vulnGeneration as gen, vulnMatches as matches, vulnMinions as vm, vulnRecords as records } from '../../db/schema'
import { $, prepare } from '../../db/prepared'
import { perHandle } from '../../db/per-handle'
import { setNum } from '../inventory/holder-store'

/** The findings' generation. */
export async function findingsGeneration(q: Queryable): Promise<number> {
  return (await q.row<Pick<Row<typeof gen>, 'generation'>>(sql`SELECT ${gen.generation} FROM ${gen} WHERE ${gen.id} = 1`))?.generation ?? 0
}

/** Moves the findings' generation. */
export async function moveFindingsGeneration(q: Queryable) {
  await q.exec(sql`UPDATE ${gen} SET generation = ${gen.generation} + 1 WHERE ${gen.id} = 1`)
}

/** The sets' and the findings' generations together, as one stamp. */
export async function generationsStamp(q: Queryable): Promise<string> {
  const r = await q.row<{ s: number | null; f: number | null }>(sql`SELECT (SELECT ${packageKeyGeneration.generation} FROM ${packageKeyGeneration} WHERE ${packageKeyGeneration.id} = 1) AS s,
    (SELECT ${gen.generation} FROM ${gen} WHERE ${gen.id} = 1) AS f`)
  // SQLite's `||` of a missing row gave '' for that side; kept so stamps compare as before.
  return `${r?.s ?? ''}:${r?.f ?? ''}`
}

/** Every match with its record's severity. */
export async function allMatches(q: Queryable) {
  return q.rows<Pick<Row<typeof matches>, 'ecosystem' | 'key_id' | 'vuln_id'> & Pick<Row<typeof records>, 'severity'>>(
    sql`SELECT ${matches.ecosystem}, ${matches.keyId}, ${matches.vulnId}, ${records.severity} FROM ${matches} JOIN ${records} ON ${records.id} = ${matches.vulnId}`,
  )
}

/** Up to `limit` sets with numbers above `after` with their counted ecosystem, in number order (a tally's pages). */
export async function countedSetsAfter(q: Queryable, after: number, limit: number) {
  return q.rows<{ num: number; eco: string | null } & Pick<Row<typeof sets>, 'minion_id' | 'keys'>>(
    sql`SELECT ${setNum(q)} AS num, ${sets.minionId}, ${sets.keys}, ${vm.ecosystem} AS eco FROM ${sets} JOIN ${vm} ON ${vm.minionNum} = ${setNum(q)}
      WHERE ${setNum(q)} > ${after} ORDER BY ${setNum(q)} LIMIT ${limitOf(limit)}`,
  )
}

/** The statements of a minion's change: a record's count moved, a minion's summary written. */
export const minionChangeWrites = perHandle((q: Queryable) => {
  return {
    bump: prepare(q, sql`UPDATE ${records} SET minion_count = ${records.minionCount} + ${$(2)} WHERE ${records.id} = ${$(1)}`),
    summary: prepare(q, sql`INSERT INTO ${vm} (minion_num, minion_id, ecosystem, vuln_count, worst) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)})
      ON CONFLICT (minion_num) DO UPDATE SET minion_id = excluded.minion_id, ecosystem = excluded.ecosystem, vuln_count = excluded.vuln_count, worst = excluded.worst`),
  }
})

/** The statements of a tally's write: a minion's summary, all counts cleared, a record's count. */
export const tallyWrites = perHandle((q: Queryable) => {
  return {
    minion: prepare(q, sql`UPDATE ${vm} SET vuln_count = ${$(2)}, worst = ${$(3)} WHERE ${vm.minionNum} = ${$(1)}`),
    clear: prepare(q, sql`UPDATE ${records} SET minion_count = 0 WHERE ${records.minionCount} <> 0`),
    count: prepare(q, sql`UPDATE ${records} SET minion_count = ${$(2)} WHERE ${records.id} = ${$(1)}`),
  }
})

/** The statements of matching keys: a record's severity, a key, a package's entries, a key's matches dropped and added. */
export const matchStatements = perHandle((q: Queryable) => {
  return {
    rank: prepare(q, sql`SELECT ${records.severity} FROM ${records} WHERE ${records.id} = ${$(1)}`),
    key: prepare(q, sql`SELECT ${keys.name}, ${keys.version}, ${keys.sourceName} FROM ${keys} WHERE ${keys.id} = ${$(1)}`),
    entries: prepare(q, sql`SELECT ${affected.ecosystem}, ${affected.vulnId}, ${affected.ranges}, ${affected.versions} FROM ${affected} WHERE ${affected.package} = ${$(1)}`),
    drop: prepare(q, sql`DELETE FROM ${matches} WHERE ${matches.keyId} = ${$(1)}`),
    dropIn: prepare(q, sql`DELETE FROM ${matches} WHERE ${matches.keyId} = ${$(1)} AND ${matches.ecosystem} = ${$(2)}`),
    add: prepare(q, sql`INSERT INTO ${matches} (ecosystem, key_id, vuln_id, package, fixed) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)})
      ON CONFLICT (ecosystem, key_id, vuln_id) DO UPDATE SET package = excluded.package, fixed = excluded.fixed`),
  }
})

/** A key as matched. */
export type MatchedKey = Pick<Row<typeof keys>, 'name' | 'version' | 'source_name'>
/** An affected entry as matched. */
export type StoredEntry = Pick<Row<typeof affected>, 'ecosystem' | 'vuln_id' | 'ranges' | 'versions'>

/** Whether any feed is imported (an affected entry is stored). */
export async function anyAffected(q: Queryable): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS one FROM ${affected} LIMIT 1`))
}

/** A minion's grains its ecosystem is read from: os, osrelease and osmajorrelease out of the stored grains JSON. */
export type EcosystemGrains = Pick<Row<typeof minions>, 'os' | 'osrelease'> & { major: unknown }

/** The read of a minion's ecosystem grains (EcosystemGrains), prepared for a loop over minions. */
export const ecosystemGrains = perHandle((q: Queryable) => {
  const major = twin(q, {
    sqlite: sql`json_extract(${minions.grains}, '$.osmajorrelease')`,
    postgres: sql`(${minions.grains}::jsonb ->> 'osmajorrelease')`,
  })
  return prepare(q, sql`SELECT ${minions.os}, ${minions.osrelease}, ${major} AS major FROM ${minions} WHERE ${minions.id} = ${$(1)}`)
})

/** The ecosystem a minion's findings were counted under (undefined: never counted). */
export const storedEcosystem = perHandle((q: Queryable) => {
  return prepare(q, sql`SELECT ${vm.ecosystem} AS e FROM ${vm} WHERE ${vm.minionNum} = ${$(1)}`)
})

/** Drops every match of a key; rows removed. */
export const dropKeyMatches = perHandle((q: Queryable) => {
  return prepare(q, sql`DELETE FROM ${matches} WHERE ${matches.keyId} = ${$(1)}`)
})

/** A minion's set by minion id: its number and key ids, prepared for a loop over minions. */
export const setOfMinion = perHandle((q: Queryable) =>
  prepare(q, sql`SELECT ${setNum(q)} AS num, ${sets.keys} FROM ${sets} WHERE ${sets.minionId} = ${$(1)}`))

/** The sets whose minion has no counted ecosystem row yet. */
export async function uncountedSets(q: Queryable) {
  return q.rows<{ num: number } & Pick<Row<typeof sets>, 'minion_id'>>(
    sql`SELECT ${setNum(q)} AS num, ${sets.minionId} FROM ${sets} LEFT JOIN ${vm} ON ${vm.minionNum} = ${setNum(q)} WHERE ${vm.minionNum} IS NULL`,
  )
}

/** Records a minion's ecosystem with no findings counted yet. */
export async function insertCountedMinion(q: Queryable, num: number, minionId: string, ecosystem: string | null) {
  await q.exec(sql`INSERT INTO ${vm} (minion_num, minion_id, ecosystem) VALUES (${num}, ${minionId}, ${ecosystem})`)
}
