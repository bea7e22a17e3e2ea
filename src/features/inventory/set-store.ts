/**
 * The SQL of the package-set writer that both engines share: the generation and the writer's copy of the keys and
 * version counts. A flush's reads and writes of sets, keys, aggregates and holders are per engine (flush-io.ts).
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { minionPackageSets as sets, packageKeyGeneration as gen, packageKeys as keys, packageVersions as versions } from '../../db/schema'

/** A stored set as the writer diffs it: its number, source, collection time and key ids. */
export type StoredSet = { num: number } & Pick<Row<typeof sets>, 'source' | 'collected_at' | 'keys'>

/** The inventory generation, moved by a flush (another writer then reloads its ids and counts); returns the new one. */
export async function bumpInventoryGeneration(q: Queryable): Promise<number> {
  return (await q.row<Pick<Row<typeof gen>, 'generation'>>(sql`INSERT INTO ${gen} (id, generation) VALUES (1, 1)
    ON CONFLICT (id) DO UPDATE SET generation = ${gen}.generation + 1 RETURNING ${gen.generation}`))!.generation
}

/** Every stored key as [id, name, version, arch], in name order (the writer's catalog numbers names in it: writer.ts open). */
export async function allKeys(q: Queryable) {
  return q.rows<Pick<Row<typeof keys>, 'id' | 'name' | 'version' | 'arch'>>(sql`SELECT ${keys.id}, ${keys.name}, ${keys.version}, ${keys.arch} FROM ${keys}
    ORDER BY ${keys.name}, ${keys.version}, ${keys.arch}`)
}

/** Every version row's count. */
export async function allVersionCounts(q: Queryable) {
  return q.rows<Pick<Row<typeof versions>, 'source' | 'name' | 'version' | 'arch' | 'minion_count'>>(
    sql`SELECT ${versions.source}, ${versions.name}, ${versions.version}, ${versions.arch}, ${versions.minionCount} FROM ${versions}`,
  )
}

/** Ids per statement when the salt source of sets is recorded (well under either engine's parameter limit). */
const SOURCE_IDS = 1000

/** Records that these minions' sets came through `source`; only rows that change are written. */
export async function setSaltSource(q: Queryable, ids: string[], source: string) {
  for (let i = 0; i < ids.length; i += SOURCE_IDS) {
    const some = sql.join(ids.slice(i, i + SOURCE_IDS).map((id) => sql`${id}`), sql`, `)
    await q.exec(sql`UPDATE ${sets} SET salt_source = ${source} WHERE ${sets.minionId} IN (${some}) AND ${sets.saltSource} <> ${source}`)
  }
}
