/**
 * The flush's reads and writes on SQLite: one statement per row, prepared once per flush and run at once (bun:sqlite
 * answers synchronously, so a row costs no round trip and the writer's loops never wait).
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { minionPackageSets as sets, packageHolders as holders, packageKeys as keys, packageSeen as seen, packageStats as stats, packageVersions as versions } from '../../db/schema'
import { $, prepare } from '../../db/prepared'
import { prepareInsertMinion } from '../minions/store'
import { setNum, type HolderRow } from './holder-store'
import type { StoredSet } from './set-store'
import type { AggregateIo, HolderIo, SetIo } from './flush-io'

/** The answer of a statement run on SQLite: there at once (prepared.ts types it as either). */
const sync = <T>(r: T | Promise<T>) => r as T

/** The sets' statements: a minion row made, the stored set read, a key stored (its id back), a set updated or inserted (its number back). */
export function sqliteSetIo(q: Queryable): SetIo {
  const minion = prepareInsertMinion(q)
  const old = prepare(q, sql`SELECT ${setNum(q)} AS num, ${sets.source}, ${sets.collectedAt}, ${sets.keys} FROM ${sets} WHERE ${sets.minionId} = ${$(1)}`)
  const key = prepare(q, sql`INSERT INTO ${keys} (name, version, arch) VALUES (${$(1)}, ${$(2)}, ${$(3)}) RETURNING ${keys.id}`)
  // A stored set is updated and a new one inserted (the writer has just read which), never upserted: minion numbers
  // must stay dense (bitmaps), and PostgreSQL's identity would spend one on every upsert that updates.
  const update = prepare(q, sql`UPDATE ${sets} SET source = ${$(2)}, collected_at = ${$(3)}, keys = ${$(4)} WHERE ${sets.minionId} = ${$(1)}`)
  const insert = prepare(q, sql`INSERT INTO ${sets} (minion_id, source, collected_at, keys) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}) RETURNING ${setNum(q)} AS num`)
  return {
    async read(minionIds, at) {
      const out = new Map<string, StoredSet>()
      for (const id of minionIds) {
        minion.write(id, at)
        const s = sync(old.get<StoredSet>(id))
        if (s) out.set(id, s)
      }
      return out
    },
    async insertKeys(rows) {
      return rows.map(([name, version, arch]) => sync(key.get<{ id: number }>(name, version, arch))!.id)
    },
    async write(updates, inserts) {
      for (const s of updates) update.write(s.minionId, s.source, s.collectedAt, s.keys)
      return inserts.map((s) => sync(insert.get<{ num: number }>(s.minionId, s.source, s.collectedAt, s.keys))!.num)
    },
  }
}

/** The aggregate statements of deltas.ts, each run as it is called. */
export function sqliteAggregateIo(q: Queryable): AggregateIo {
  const sameVersion = sql`${versions.source} = ${$(1)} AND ${versions.name} = ${$(2)} AND ${versions.version} = ${$(3)} AND ${versions.arch} = ${$(4)}`
  const vIns = prepare(q, sql`INSERT INTO ${versions} (source, name, version, arch, minion_count) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)})`)
  const vUpd = prepare(q, sql`UPDATE ${versions} SET minion_count = ${$(5)} WHERE ${sameVersion}`)
  const vDel = prepare(q, sql`DELETE FROM ${versions} WHERE ${sameVersion}`)
  const vCount = prepare(q, sql`UPDATE ${stats} SET version_count = ${$(3)} WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.versionCount} <> ${$(3)}`)
  const keyDel = prepare(q, sql`DELETE FROM ${keys} WHERE ${keys.id} = ${$(1)}`)
  const sAdd = prepare(q, sql`INSERT INTO ${stats} (source, name, minion_count, version_count, last_seen) VALUES (${$(1)}, ${$(2)}, ${$(3)}, 0, ${$(4)})
    ON CONFLICT (source, name) DO UPDATE SET minion_count = ${stats}.minion_count + excluded.minion_count`)
  const sDrop = prepare(q, sql`DELETE FROM ${stats} WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.minionCount} <= 0`)
  const seenAdd = prepare(q, sql`INSERT INTO ${seen} (source, name, seen_at, n) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)})
    ON CONFLICT (source, name, seen_at) DO UPDATE SET n = ${seen}.n + excluded.n`)
  const seenDrop = prepare(q, sql`DELETE FROM ${seen} WHERE ${seen.source} = ${$(1)} AND ${seen.name} = ${$(2)} AND ${seen.seenAt} = ${$(3)} AND ${seen.n} <= 0`)
  const raise = prepare(q, sql`UPDATE ${stats} SET last_seen = ${$(3)} WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.lastSeen} < ${$(3)}`)
  const recompute = prepare(q, sql`UPDATE ${stats} SET last_seen = (SELECT max(s.seen_at) FROM ${seen} s WHERE s.source = ${$(1)} AND s.name = ${$(2)})
    WHERE ${stats.source} = ${$(1)} AND ${stats.name} = ${$(2)} AND ${stats.lastSeen} <= ${$(3)}`)
  const recomputeAll = prepare(q, sql`UPDATE ${stats} SET last_seen = (SELECT max(s.last_seen) FROM ${stats} s WHERE s.name = ${$(1)} AND s.source <> '')
    WHERE ${stats.source} = '' AND ${stats.name} = ${$(1)} AND ${stats.lastSeen} <= ${$(2)}`)
  return {
    versionIns: (source, name, version, arch, count) => void vIns.write(source, name, version, arch, count),
    versionUpd: (source, name, version, arch, count) => void vUpd.write(source, name, version, arch, count),
    versionDel: (source, name, version, arch) => void vDel.write(source, name, version, arch),
    statsAdd: (source, name, count, at) => void sAdd.write(source, name, count, at),
    statsDrop: (source, name) => void sDrop.write(source, name),
    versionCount: (source, name, count) => void vCount.write(source, name, count),
    seenAdd: (source, name, at, n) => void seenAdd.write(source, name, at, n),
    seenDrop: (source, name, at, emptied) => void (sync(seenDrop.run(source, name, at)) && emptied()),
    raise: (source, name, at) => void raise.write(source, name, at),
    recompute: (source, name, at) => void recompute.write(source, name, at),
    recomputeAll: (name, at) => void recomputeAll.write(name, at),
    deleteKey: (id) => void keyDel.write(id),
    settle: async () => {},
  }
}

/** The holder index's statements: a chunk's rows in one range read (the key is (chunk, key id)), a row written or dropped. */
export function sqliteHolderIo(q: Queryable): HolderIo {
  const chunkRows = prepare(q, sql`SELECT ${holders.keyId}, ${holders.bits} FROM ${holders} WHERE ${holders.chunk} = ${$(1)}`)
  const put = prepare(q, sql`INSERT INTO ${holders} (chunk, key_id, bits) VALUES (${$(1)}, ${$(2)}, ${$(3)})
    ON CONFLICT (chunk, key_id) DO UPDATE SET bits = excluded.bits`)
  const drop = prepare(q, sql`DELETE FROM ${holders} WHERE ${holders.chunk} = ${$(1)} AND ${holders.keyId} = ${$(2)}`)
  return {
    // The whole range: one statement, cheaper on SQLite than a lookup per changed key.
    rows: async (chunk) => sync(chunkRows.all<HolderRow>(chunk)),
    put: (chunk, keyId, bits) => void put.write(chunk, keyId, bits),
    drop: (chunk, keyId) => void drop.write(chunk, keyId),
    settle: async () => {},
  }
}
