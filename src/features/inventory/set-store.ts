/**
 * The SQL of the package-set writer: a minion's set row, package_keys, the generation, and the aggregates
 * (package_versions, package_stats, package_seen) a flush adjusts. The per-row statements are prepared on the flush's
 * transaction (prepared.ts): a flush writes one row per changed key and name, thousands per flush.
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { minionPackageSets as sets, packageKeyGeneration as gen, packageKeys as keys, packageSeen as seen, packageStats as stats, packageVersions as versions } from '../../db/schema'
import { $, prepare } from '../../db/prepared'
import { setNum } from './holder-store'

/** A stored set as the writer diffs it: its number, source, collection time and key ids. */
export type StoredSet = { num: number } & Pick<Row<typeof sets>, 'source' | 'collected_at' | 'keys'>

/** The per-minion statements of a flush: the stored set read, the new set written (a new one's number back), a new key stored (its id back). */
export function setWrites(q: Queryable) {
  return {
    old: prepare(q, sql`SELECT ${setNum(q)} AS num, ${sets.source}, ${sets.collectedAt}, ${sets.keys} FROM ${sets} WHERE ${sets.minionId} = ${$(1)}`),
    // A stored set is updated and a new one inserted (the writer has just read which), never upserted: PostgreSQL's
    // identity would spend a number on every upsert that updates, and minion numbers must stay dense (bitmaps).
    insert: prepare(q, sql`INSERT INTO ${sets} (minion_id, source, collected_at, keys) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}) RETURNING ${setNum(q)} AS num`),
    update: prepare(q, sql`UPDATE ${sets} SET source = ${$(2)}, collected_at = ${$(3)}, keys = ${$(4)} WHERE ${sets.minionId} = ${$(1)}`),
    key: prepare(q, sql`INSERT INTO ${keys} (name, version, arch) VALUES (${$(1)}, ${$(2)}, ${$(3)}) RETURNING ${keys.id}`),
  }
}

/** The statements of a flush's aggregate deltas (deltas.ts), prepared on its transaction. */
export function aggregateWrites(q: Queryable) {
  const sameVersion = sql`${versions.source} = ${$(1)} AND ${versions.name} = ${$(2)} AND ${versions.version} = ${$(3)} AND ${versions.arch} = ${$(4)}`
  return {
    version: {
      ins: prepare(q, sql`INSERT INTO ${versions} (source, name, version, arch, minion_count) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)})`),
      upd: prepare(q, sql`UPDATE ${versions} SET minion_count = ${$(5)} WHERE ${sameVersion}`),
      del: prepare(q, sql`DELETE FROM ${versions} WHERE ${sameVersion}`),
    },
    versionCount: prepare(q, sql`UPDATE ${stats} SET version_count = ${$(3)} WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.versionCount} <> ${$(3)}`),
    deleteKey: prepare(q, sql`DELETE FROM ${keys} WHERE ${keys.id} = ${$(1)}`),
    stats: {
      add: prepare(q, sql`INSERT INTO ${stats} (source, name, minion_count, version_count, last_seen) VALUES (${$(1)}, ${$(2)}, ${$(3)}, 0, ${$(4)})
        ON CONFLICT (source, name) DO UPDATE SET minion_count = ${stats}.minion_count + excluded.minion_count`),
      drop: prepare(q, sql`DELETE FROM ${stats} WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.minionCount} <= 0`),
    },
    seen: {
      add: prepare(q, sql`INSERT INTO ${seen} (source, name, seen_at, n) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)})
        ON CONFLICT (source, name, seen_at) DO UPDATE SET n = ${seen}.n + excluded.n`),
      drop: prepare(q, sql`DELETE FROM ${seen} WHERE ${seen.source} = ${$(1)} AND ${seen.name} = ${$(2)} AND ${seen.seenAt} = ${$(3)} AND ${seen.n} <= 0`),
      raise: prepare(q, sql`UPDATE ${stats} SET last_seen = ${$(3)} WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.lastSeen} < ${$(3)}`),
      recompute: prepare(q, sql`UPDATE ${stats} SET last_seen = (SELECT max(s.seen_at) FROM ${seen} s WHERE s.source = ${$(1)} AND s.name = ${$(2)})
        WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.lastSeen} <= ${$(3)}`),
      recomputeAll: prepare(q, sql`UPDATE ${stats} SET last_seen = (SELECT max(s.last_seen) FROM ${stats} s WHERE s.name = ${$(1)} AND s.source <> '')
        WHERE ${stats.source} = '' AND ${stats.name} = ${$(1)} AND ${stats.lastSeen} <= ${$(2)}`),
    },
  }
}

/** The inventory generation, moved by a flush (another writer then reloads its ids and counts); returns the new one. */
export async function bumpInventoryGeneration(q: Queryable): Promise<number> {
  return (await q.row<Pick<Row<typeof gen>, 'generation'>>(sql`INSERT INTO ${gen} (id, generation) VALUES (1, 1)
    ON CONFLICT (id) DO UPDATE SET generation = ${gen}.generation + 1 RETURNING ${gen.generation}`))!.generation
}

/** Every stored key as [id, name, version, arch]. */
export async function allKeys(q: Queryable) {
  return q.rows<Pick<Row<typeof keys>, 'id' | 'name' | 'version' | 'arch'>>(sql`SELECT ${keys.id}, ${keys.name}, ${keys.version}, ${keys.arch} FROM ${keys}`)
}

/** Every version row's count. */
export async function allVersionCounts(q: Queryable) {
  return q.rows<Pick<Row<typeof versions>, 'source' | 'name' | 'version' | 'arch' | 'minion_count'>>(
    sql`SELECT ${versions.source}, ${versions.name}, ${versions.version}, ${versions.arch}, ${versions.minionCount} FROM ${versions}`,
  )
}
