/**
 * The SQL of the holder index (package_holders) and of the minion numbers it is keyed by. A minion's number is its
 * package-set row's rowid on SQLite; PostgreSQL has no rowid, so its minion_package_sets needs a `num` identity column
 * (drizzle-pg/0003) and `setNum` names it there.
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { twin } from '../../db/engine'
import type { Row } from '../../db/row'
import { minionPackageSets as sets, packageHolders as holders, packageKeys as keys } from '../../db/schema'
import { $, prepare, type Prepared } from '../../db/prepared'

/** A minion's number: the column of minion_package_sets that numbers its rows. */
export const setNum = (q: Queryable): SQL => twin(q, { sqlite: sql`${sets}.rowid`, postgres: sql`${sets}.num` })

/** One stored chunk row. */
export type HolderRow = Pick<Row<typeof holders>, 'key_id' | 'bits'>

/** The highest package_keys id (0 with none). */
export async function maxKeyId(q: Queryable): Promise<number> {
  return (await q.row<{ m: number | null }>(sql`SELECT max(${keys.id}) AS m FROM ${keys}`))?.m ?? 0
}

/** The highest minion number (0 with no set). */
export async function maxSetNum(q: Queryable): Promise<number> {
  return (await q.row<{ m: number | null }>(sql`SELECT max(${setNum(q)}) AS m FROM ${sets}`))?.m ?? 0
}

/** Every set's number, minion and source, by minion id. */
export async function setsByMinion(q: Queryable) {
  return q.rows<{ num: number } & Pick<Row<typeof sets>, 'minion_id' | 'source' | 'salt_source'>>(
    sql`SELECT ${setNum(q)} AS num, ${sets.minionId}, ${sets.source}, ${sets.saltSource} FROM ${sets} ORDER BY ${sets.minionId}`,
  )
}

/** The read of one key's chunk, prepared for a walk over the chunks. */
export function holderChunk(q: Queryable): Prepared {
  return prepare(q, sql`SELECT ${holders.bits} FROM ${holders} WHERE ${holders.chunk} = ${$(1)} AND ${holders.keyId} = ${$(2)}`)
}

/** Empties the index (before a rebuild). */
export async function clearHolders(q: Queryable) {
  await q.exec(sql`DELETE FROM ${holders}`)
}

/** Up to `limit` sets with numbers above `after`, in number order (a rebuild's pages). */
export async function setKeysAfter(q: Queryable, after: number, limit: number) {
  return q.rows<{ num: number } & Pick<Row<typeof sets>, 'keys'>>(
    sql`SELECT ${setNum(q)} AS num, ${sets.keys} FROM ${sets} WHERE ${setNum(q)} > ${after} ORDER BY ${setNum(q)} LIMIT ${limitOf(limit)}`,
  )
}

/** Whether the index holds any row. */
export async function anyHolder(q: Queryable): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS one FROM ${holders} LIMIT 1`))
}

/** Whether any stored set holds a key. */
export async function anyHeldSet(q: Queryable): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS one FROM ${sets} WHERE length(${sets.keys}) > 0 LIMIT 1`))
}
