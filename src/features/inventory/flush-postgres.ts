/**
 * The flush's reads and writes on PostgreSQL, set-based: rows are gathered and sent as multi-row statements
 * (db/multi-row.ts) pipelined on the transaction's connection, a few hundred to a few thousand rows a statement. A
 * statement per row made the flush a round trip per changed key, name, set and holder chunk (5,000 minions × 1,500
 * packages took 146 s against SQLite's 7 s, bench/RESULTS.md).
 */
import type { SQL } from 'drizzle-orm'
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { Pipeline } from '../../db/prepared'
import { ArrayRows, MultiRow } from '../../db/multi-row'
import { minionPackageSets as sets, packageHolders as holders, packageKeys as keys, packageSeen as seen, packageStats as stats, packageVersions as versions } from '../../db/schema'
import { insertMinionRows } from '../minions/store'
import { setNum, type HolderRow } from './holder-store'
import type { StoredSet } from './set-store'
import type { AggregateIo, HolderIo, SetIo } from './flush-io'

/** Rows per statement: sets carry a few KB of key ids each, the other rows a few dozen bytes (bits: at most 512). */
const SET_ROWS = 256
const ROWS = 2048
/** The source of the all-sources rows of package_stats. */
const ALL = ''

/** Text as PostgreSQL stores it and RETURNING gives it back: its text holds no NUL, which db/postgres.ts sends as U+FFFD. */
const stored = (s: string) => (s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s)

/** A key as the lookup of RETURNING rows spells it. */
const keyText = (name: string, version: string, arch: string) => `${stored(name)}\0${stored(version)}\0${stored(arch)}`

/** The sets' statements: minion rows, the stored sets read, keys stored, sets updated and inserted; each call one pipelined round. */
export function postgresSetIo(q: Queryable): SetIo {
  const p = new Pipeline()
  const minions = insertMinionRows(q, p)
  let found = new Map<string, StoredSet>()
  const old = new ArrayRows<StoredSet & { minion_id: string }>(q, p, ['text'], (v) => sql`SELECT ${setNum(q)} AS num, ${sets.minionId}, ${sets.source}, ${sets.collectedAt}, ${sets.keys}
    FROM ${sets} JOIN ${v} AS v(minion_id) ON ${sets.minionId} = v.minion_id`, { then: (rows) => rows.forEach((r) => found.set(r.minion_id, r)) })
  let ids = new Map<string, number>()
  const key = new ArrayRows<{ id: number; name: string; version: string; arch: string }>(q, p, ['text', 'text', 'text'], (v) => sql`INSERT INTO ${keys} (name, version, arch)
    SELECT * FROM ${v} RETURNING ${keys.id}, ${keys.name}, ${keys.version}, ${keys.arch}`, { then: (rows) => rows.forEach((r) => ids.set(keyText(r.name, r.version, r.arch), r.id)) })
  // Stored sets are updated and new ones inserted, never upserted: minion numbers must stay dense (bitmaps), and the
  // identity would spend one on every upsert that updates.
  const update = new MultiRow(q, p, ['text', 'text', 'bigint', 'bytea'], (v) => sql`UPDATE ${sets} SET source = v.source, collected_at = v.collected_at, keys = v.keys
    FROM (VALUES ${v}) AS v(minion_id, source, collected_at, keys) WHERE ${sets.minionId} = v.minion_id`, SET_ROWS)
  let nums = new Map<string, number>()
  const insert = new MultiRow<{ num: number; minion_id: string }>(q, p, ['text', 'text', 'bigint', 'bytea'], (v) => sql`INSERT INTO ${sets} (minion_id, source, collected_at, keys)
    VALUES ${v} RETURNING ${setNum(q)} AS num, ${sets.minionId}`, SET_ROWS, { then: (rows) => rows.forEach((r) => nums.set(r.minion_id, r.num)) })
  return {
    async read(minionIds, at) {
      found = new Map()
      for (const id of minionIds) minions.add(id, at), old.add(id)
      minions.send()
      old.send()
      await p.drain()
      const out = new Map<string, StoredSet>()
      for (const id of minionIds) {
        const s = found.get(stored(id))
        if (s) out.set(id, s)
      }
      return out
    },
    async insertKeys(rows) {
      ids = new Map()
      for (const [name, version, arch] of rows) key.add(name, version, arch)
      key.send()
      await p.drain()
      return rows.map(([name, version, arch]) => {
        const id = ids.get(keyText(name, version, arch))
        if (id === undefined) throw new Error('a stored package key did not come back from its INSERT')
        return id
      })
    },
    async write(updates, inserts) {
      nums = new Map()
      for (const s of updates) update.add(s.minionId, s.source, s.collectedAt, s.keys)
      for (const s of inserts) insert.add(s.minionId, s.source, s.collectedAt, s.keys)
      update.send()
      insert.send()
      await p.drain()
      return inserts.map((s) => nums.get(stored(s.minionId))!)
    },
  }
}

/** A package_stats row's changes in one flush, gathered from every call that touches it (null: left as it is). */
interface StatsChange {
  source: string
  name: string
  /** minion_count moves by this; a new row is made when it is positive. */
  n: number
  /** last_seen of a new row. */
  at: number | null
  vc: number | null
  /** last_seen raised to this if earlier. */
  raise: number | null
  /** last_seen recomputed if, after the raise, at or before this. */
  recompute: number | null
  drop: boolean
}

/**
 * The aggregate statements of deltas.ts as multi-row statements, each kind after the kinds its rows depend on.
 * package_stats is written once per row and flush: its calls (count, version count, last_seen raised or recomputed)
 * are gathered per row and sent as one statement at settle. Three statements a row rewrote each row up to three times
 * per flush, every time across its five indexes (no HOT update: the columns are indexed), and took half of the
 * server's time (bench/RESULTS.md).
 */
export function postgresAggregateIo(q: Queryable): AggregateIo {
  const p = new Pipeline()
  const version = ['text', 'text', 'text', 'text']
  const sameVersion = sql`${versions.source} = v.source AND ${versions.name} = v.name AND ${versions.version} = v.version AND ${versions.arch} = v.arch`
  const sameName = sql`${stats.source} = v.source AND ${stats.name} = v.name`
  const vIns = new ArrayRows(q, p, [...version, 'bigint'], (v) => sql`INSERT INTO ${versions} (source, name, version, arch, minion_count) SELECT * FROM ${v}`)
  const vUpd = new ArrayRows(q, p, [...version, 'bigint'], (v) => sql`UPDATE ${versions} SET minion_count = v.n
    FROM ${v} AS v(source, name, version, arch, n) WHERE ${sameVersion}`)
  const vDel = new ArrayRows(q, p, version, (v) => sql`DELETE FROM ${versions} USING ${v} AS v(source, name, version, arch) WHERE ${sameVersion}`)
  const seenAdd = new ArrayRows(q, p, ['text', 'text', 'bigint', 'bigint'], (v) => sql`INSERT INTO ${seen} (source, name, seen_at, n) SELECT * FROM ${v}
    ON CONFLICT (source, name, seen_at) DO UPDATE SET n = ${seen}.n + excluded.n`)
  // Each row carries its place in `emptied`, and the rows deleted come back with theirs.
  let emptied: (() => void)[] = []
  const seenDrop = new ArrayRows<{ i: number }>(q, p, ['text', 'text', 'bigint', 'int'], (v) => sql`DELETE FROM ${seen} USING ${v} AS v(source, name, seen_at, i)
    WHERE ${seen.source} = v.source AND ${seen.name} = v.name AND ${seen.seenAt} = v.seen_at AND ${seen.n} <= 0 RETURNING v.i`,
  { after: [seenAdd], then: (rows) => rows.forEach((r) => emptied[r.i]!()) })
  // A row no minion holds any more goes before the rows are written (its count with this flush's move at or below 0).
  const sDrop = new ArrayRows(q, p, ['text', 'text', 'bigint'], (v) => sql`DELETE FROM ${stats} USING ${v} AS v(source, name, n)
    WHERE ${sameName} AND ${stats.minionCount} + v.n <= 0`)
  const statsRows = (recomputed: SQL) => (v: SQL) => {
    // last_seen as the per-call statements left it: raised (greatest skips a null), then recomputed if at or before.
    const lastSeen = (from: SQL) => sql`CASE WHEN v.recompute IS NOT NULL AND greatest(${from}, v.raise) <= v.recompute THEN ${recomputed} ELSE greatest(${from}, v.raise) END`
    // Existing rows are updated only where something moves; the rest are new rows. Both see the table as it was
    // before the statement (one snapshot), so a row is either updated or inserted, never both.
    return sql`WITH v AS (SELECT * FROM ${v} AS v(source, name, n, at, vc, raise, recompute)), u AS (
      UPDATE ${stats} SET minion_count = ${stats.minionCount} + v.n, version_count = coalesce(v.vc, ${stats.versionCount}), last_seen = ${lastSeen(sql`${stats.lastSeen}`)}
      FROM v WHERE ${sameName} AND (v.n <> 0 OR v.vc <> ${stats.versionCount} OR v.raise > ${stats.lastSeen} OR v.recompute >= ${stats.lastSeen}))
    INSERT INTO ${stats} (source, name, minion_count, version_count, last_seen)
    SELECT v.source, v.name, v.n, coalesce(v.vc, 0), ${lastSeen(sql`v.at`)} FROM v
    WHERE v.n > 0 AND NOT EXISTS (SELECT 1 FROM ${stats} WHERE ${sameName})`
  }
  const statsTypes = ['text', 'text', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint']
  const sourceStats = new ArrayRows(q, p, statsTypes, statsRows(sql`(SELECT max(s.seen_at) FROM ${seen} s WHERE s.source = v.source AND s.name = v.name)`), { after: [sDrop] })
  // The all-sources rows after the source rows, whose last_seen they may be recomputed from.
  const allStats = new ArrayRows(q, p, statsTypes, statsRows(sql`(SELECT max(s.last_seen) FROM ${stats} s WHERE s.name = v.name AND s.source <> '')`), { after: [sourceStats] })
  const keyDel = new ArrayRows(q, p, ['bigint'], (v) => sql`DELETE FROM ${keys} USING ${v} AS v(id) WHERE ${keys.id} = v.id`)
  let changed = new Map<string, StatsChange>()
  const row = (source: string, name: string) => {
    const k = `${source}\0${name}`
    let c = changed.get(k)
    if (!c) changed.set(k, (c = { source, name, n: 0, at: null, vc: null, raise: null, recompute: null, drop: false }))
    return c
  }
  const later = (a: number | null, b: number) => (a === null ? b : Math.max(a, b))
  const sendStats = () => {
    for (const c of changed.values()) {
      if (c.drop) sDrop.add(c.source, c.name, c.n)
      const to = c.source === ALL ? allStats : sourceStats
      to.add(c.source, c.name, c.n, c.at, c.vc, c.raise, c.recompute)
    }
    changed = new Map()
  }
  const all = [vIns, vUpd, vDel, seenAdd, seenDrop, keyDel]
  return {
    versionIns: (source, name, version, arch, count) => vIns.add(source, name, version, arch, count),
    versionUpd: (source, name, version, arch, count) => vUpd.add(source, name, version, arch, count),
    versionDel: (source, name, version, arch) => vDel.add(source, name, version, arch),
    statsAdd: (source, name, count, at) => {
      const c = row(source, name)
      c.n += count
      c.at = at
    },
    statsDrop: (source, name) => void (row(source, name).drop = true),
    versionCount: (source, name, count) => void (row(source, name).vc = count),
    seenAdd: (source, name, at, n) => seenAdd.add(source, name, at, n),
    seenDrop: (source, name, at, then) => seenDrop.add(source, name, at, emptied.push(then) - 1),
    raise: (source, name, at) => {
      const c = row(source, name)
      c.raise = later(c.raise, at)
    },
    recompute: (source, name, at) => {
      const c = row(source, name)
      c.recompute = later(c.recompute, at)
    },
    recomputeAll: (name, at) => {
      const c = row(ALL, name)
      c.recompute = later(c.recompute, at)
    },
    deleteKey: (id) => keyDel.add(id),
    async settle() {
      for (const m of all) m.send()
      sendStats()
      sDrop.send()
      sourceStats.send()
      allStats.send()
      await p.drain()
      emptied = []
    },
  }
}

/** The holder index's statements: a chunk's rows read by key, rows written and dropped by the few thousand. */
export function postgresHolderIo(q: Queryable): HolderIo {
  const p = new Pipeline()
  let got: HolderRow[] = []
  // Only the keys this apply changes: a chunk holds a row per key any of its 4,096 minions holds (tens of thousands).
  const read = new ArrayRows<HolderRow>(q, p, ['bigint', 'bigint'], (v) => sql`SELECT ${holders.keyId}, ${holders.bits}
    FROM ${holders} JOIN ${v} AS v(chunk, key_id) ON ${holders.chunk} = v.chunk AND ${holders.keyId} = v.key_id`, { then: (rows) => rows.forEach((r) => got.push(r)) })
  const put = new MultiRow(q, p, ['bigint', 'bigint', 'bytea'], (v) => sql`INSERT INTO ${holders} (chunk, key_id, bits) VALUES ${v}
    ON CONFLICT (chunk, key_id) DO UPDATE SET bits = excluded.bits`, ROWS)
  const drop = new ArrayRows(q, p, ['bigint', 'bigint'], (v) => sql`DELETE FROM ${holders} USING ${v} AS v(chunk, key_id)
    WHERE ${holders.chunk} = v.chunk AND ${holders.keyId} = v.key_id`)
  return {
    async rows(chunk, keyIds) {
      got = []
      for (const id of keyIds) read.add(chunk, id)
      read.send()
      await p.drain()
      return got
    },
    put: (chunk, keyId, bits) => put.add(chunk, keyId, bits),
    drop: (chunk, keyId) => drop.add(chunk, keyId),
    async settle() {
      put.send()
      drop.send()
      await p.drain()
    },
  }
}
