/**
 * Stores collected package sets. Each minion's set is one row (package_keys ids in a blob); a flush diffs every queued
 * set against the stored one in memory and applies the summed count deltas to package_versions, package_stats and
 * package_seen, all in one transaction, so the aggregates cost one statement per changed key or name per flush rather
 * than per package row.
 */
import type { AppDeps } from '../../deps'
import { ensureMinion } from '../minions/service'
import { PackageCatalog, grow } from './catalog'

/** One installed package version. */
export interface Pkg {
  name: string
  version: string
  arch?: string
}

const ALL = ''

/** Accumulates package sets (as catalog key indexes) and stores them with every aggregate in one transaction per flush. */
export class PackageSetWriter {
  readonly catalog = new PackageCatalog()
  private pending: { minionId: string; source: string; keys: Int32Array }[] = []
  private generation = -1
  private keyStamp = new Int32Array(1024)
  private nameStamp = new Int32Array(1024)
  private tick = 0

  constructor(private deps: AppDeps) {
    this.loadIds()
  }

  /** Number of minions queued since the last flush. */
  get pendingMinions() {
    return this.pending.length
  }

  /** Queues one minion's set, given as key indexes of this writer's catalog; duplicates count once. */
  add(minionId: string, source: string, keys: ArrayLike<number>, n = keys.length) {
    if (this.keyStamp.length < this.catalog.keys.size) this.keyStamp = grow(this.keyStamp, this.catalog.keys.size)
    const stamp = this.keyStamp
    const t = ++this.tick
    const out = new Int32Array(n)
    let m = 0
    for (let i = 0; i < n; i++) {
      const k = keys[i]!
      if (stamp[k] === t) continue
      stamp[k] = t
      out[m++] = k
    }
    this.pending.push({ minionId, source, keys: m === n ? out : out.slice(0, m) })
  }

  /** Queues one minion's set given as package rows. */
  addPackages(minionId: string, source: string, packages: Pkg[]) {
    this.add(minionId, source, packages.map((p) => this.catalog.keyOf(p.name, p.version, p.arch ?? '')))
  }

  /** Stores every queued set, collected at `collectedAt`, with the aggregates, in one transaction; returns the rows stored. */
  flush(collectedAt = this.deps.clock.now()): number {
    const db = this.deps.db.$client
    const sets = this.pending
    this.pending = []
    if (!sets.length) return 0
    let stored = 0
    try {
      db.transaction(() => {
        const gen = db.query<{ g: number }, []>('SELECT generation AS g FROM package_key_generation WHERE id = 1').get()?.g ?? 0
        if (gen !== this.generation) this.loadIds()
        const d = new Deltas(this.catalog)
        for (const s of sets) stored += this.replace(s, collectedAt, d)
        const keysChanged = d.apply(this.deps, collectedAt) || d.inserted.length > 0
        if (keysChanged) {
          this.generation = db.query<{ g: number }, []>(`INSERT INTO package_key_generation (id, generation) VALUES (1, 1)
            ON CONFLICT (id) DO UPDATE SET generation = generation + 1 RETURNING generation AS g`).get()!.g
        }
      })()
    } catch (e) {
      // Ids handed out inside the rolled-back transaction are void: reload them before the next flush.
      this.generation = -1
      throw e
    }
    return stored
  }

  /** Diffs one set against the stored one into `d` and writes the new row; returns its size. */
  private replace(s: { minionId: string; source: string; keys: Int32Array }, at: number, d: Deltas): number {
    const db = this.deps.db.$client
    const cat = this.catalog
    ensureMinion(this.deps, s.minionId)
    if (this.nameStamp.length < cat.names.size) this.nameStamp = grow(this.nameStamp, cat.names.size)
    const names = this.nameStamp
    const old = db.query<{ source: string; collected_at: number; keys: Uint8Array }, [string]>(
      'SELECT source, collected_at, keys FROM minion_package_sets WHERE minion_id = ?1',
    ).get(s.minionId)
    if (old) {
      const ver = d.versions(old.source)
      const seen = d.seen(old.source, old.collected_at)
      const t = ++this.tick
      const view = new DataView(old.keys.buffer, old.keys.byteOffset, old.keys.byteLength)
      for (let o = 0; o < old.keys.byteLength; o += 4) {
        const k = cat.indexOfId(view.getUint32(o, true))
        if (k < 0) throw new Error(`package set of ${s.minionId.slice(0, 100)} refers to an unknown package key`)
        ver[k]!--
        const nm = cat.keyName[k]!
        if (names[nm] !== t) (names[nm] = t), seen[nm]!--
      }
    }
    const ver = d.versions(s.source)
    const seen = d.seen(s.source, at)
    const t = ++this.tick
    const blob = new Uint8Array(s.keys.length * 4)
    const view = new DataView(blob.buffer)
    for (let i = 0; i < s.keys.length; i++) {
      const k = s.keys[i]!
      ver[k]!++
      const nm = cat.keyName[k]!
      if (names[nm] !== t) (names[nm] = t), seen[nm]!++
      view.setUint32(i * 4, cat.keyId[k] || this.insertKey(k, d), true)
    }
    db.query(`INSERT INTO minion_package_sets (minion_id, source, collected_at, keys) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT (minion_id) DO UPDATE SET source = excluded.source, collected_at = excluded.collected_at, keys = excluded.keys`).run(s.minionId, s.source, at, blob)
    return s.keys.length
  }

  /** Stores a key the database does not have yet; returns its id. */
  private insertKey(k: number, d: Deltas): number {
    const c = this.catalog
    const r = this.deps.db.$client.query('INSERT INTO package_keys (name, version, arch) VALUES (?1, ?2, ?3)').run(c.nameOf[c.keyName[k]!]!, c.versionOf[k]!, c.archOf[k]!)
    c.setId(k, Number(r.lastInsertRowid))
    d.inserted.push(k)
    return c.keyId[k]!
  }

  /** Loads every stored key id into the catalog (at start, and after another writer changed package_keys). */
  private loadIds() {
    const db = this.deps.db.$client
    this.catalog.clearIds()
    this.generation = db.query<{ g: number }, []>('SELECT generation AS g FROM package_key_generation WHERE id = 1').get()?.g ?? 0
    for (const [id, name, version, arch] of db.query<[number, string, string, string], []>('SELECT id, name, version, arch FROM package_keys').values() as [number, string, string, string][])
      this.catalog.setId(this.catalog.keyOf(name, version, arch), id)
  }
}

/** The count deltas of one flush: per source and key (package_versions), per source, collection time and name (package_seen). */
class Deltas {
  private ver = new Map<string, Int32Array>()
  private seenAt = new Map<string, { source: string; at: number; d: Int32Array }>()
  /** Keys added to package_keys in this flush. */
  readonly inserted: number[] = []

  constructor(private cat: PackageCatalog) {}

  /** Per-key deltas of one source. */
  versions(source: string): Int32Array {
    let a = this.ver.get(source)
    if (!a) this.ver.set(source, (a = new Int32Array(this.cat.keys.size)))
    return a
  }

  /** Per-name deltas of minions of one source collected at one time. */
  seen(source: string, at: number): Int32Array {
    const k = `${source}\u0000${at}`
    let e = this.seenAt.get(k)
    if (!e) this.seenAt.set(k, (e = { source, at, d: new Int32Array(this.cat.names.size) }))
    return e.d
  }

  /** Writes the deltas to the aggregate tables; returns whether package_keys lost rows. */
  apply(deps: AppDeps, at: number): boolean {
    const db = deps.db.$client
    const cat = this.cat
    const q = {
      verAdd: db.query(`INSERT INTO package_versions (source, name, version, arch, minion_count) VALUES (?1, ?2, ?3, ?4, ?5)
        ON CONFLICT (source, name, version, arch) DO UPDATE SET minion_count = minion_count + excluded.minion_count`),
      verDrop: db.query('DELETE FROM package_versions WHERE source = ?1 AND name = ?2 AND version = ?3 AND arch = ?4 AND minion_count <= 0'),
      keyDrop: db.query('DELETE FROM package_keys WHERE id = ?1'),
      nameAdd: db.query(`INSERT INTO package_stats (source, name, minion_count, version_count, last_seen) VALUES (?1, ?2, ?3, 0, ?4)
        ON CONFLICT (source, name) DO UPDATE SET minion_count = minion_count + excluded.minion_count`),
      nameDrop: db.query('DELETE FROM package_stats WHERE source = ?1 AND name = ?2 AND minion_count <= 0'),
      versions: db.query(`UPDATE package_stats SET version_count = (SELECT count(DISTINCT version) FROM package_versions v WHERE v.source = ?1 AND v.name = ?2)
        WHERE source = ?1 AND name = ?2`),
      seenAdd: db.query(`INSERT INTO package_seen (source, name, seen_at, n) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (source, name, seen_at) DO UPDATE SET n = n + excluded.n`),
      seenDrop: db.query('DELETE FROM package_seen WHERE source = ?1 AND name = ?2 AND seen_at = ?3 AND n <= 0'),
      seen: db.query(`UPDATE package_stats SET last_seen = (SELECT max(seen_at) FROM package_seen s WHERE s.source = ?1 AND s.name = ?2)
        WHERE source = ?1 AND name = ?2`),
      seenAll: db.query(`UPDATE package_stats SET last_seen = (SELECT max(last_seen) FROM package_stats s WHERE s.name = ?1 AND s.source <> '')
        WHERE source = '' AND name = ?1`),
    }
    const K = cat.keys.size
    const N = cat.names.size
    let dropped = false
    // Versions per source, then the all-sources rows from their sum; a key nobody holds any more leaves package_keys.
    const verTouched = new Map<string, Uint8Array>()
    const touch = (m: Map<string, Uint8Array>, source: string, nm: number) => {
      let a = m.get(source)
      if (!a) m.set(source, (a = new Uint8Array(N)))
      a[nm] = 1
    }
    const all = new Int32Array(K)
    const verRow = (source: string, k: number, d: number) => {
      const name = cat.nameOf[cat.keyName[k]!]!
      q.verAdd.run(source, name, cat.versionOf[k]!, cat.archOf[k]!, d)
      touch(verTouched, source, cat.keyName[k]!)
      return d < 0 && q.verDrop.run(source, name, cat.versionOf[k]!, cat.archOf[k]!).changes > 0
    }
    for (const [source, d] of this.ver)
      for (let k = 0; k < d.length; k++) {
        if (!d[k]) continue
        all[k]! += d[k]!
        verRow(source, k, d[k]!)
      }
    for (let k = 0; k < K; k++) {
      if (!all[k] || !verRow(ALL, k, all[k]!)) continue
      q.keyDrop.run(cat.keyId[k]!)
      cat.setId(k, 0)
      dropped = true
    }
    // A key stored and dropped again within this flush (the same minion queued twice) never got an all-sources row.
    const held = db.query("SELECT 1 FROM package_versions WHERE source = '' AND name = ?1 AND version = ?2 AND arch = ?3")
    for (const k of this.inserted) {
      if (!cat.keyId[k] || held.get(cat.nameOf[cat.keyName[k]!]!, cat.versionOf[k]!, cat.archOf[k]!)) continue
      q.keyDrop.run(cat.keyId[k]!)
      cat.setId(k, 0)
      dropped = true
    }
    // Holders per name: the sum of the name's seen deltas over the collection times, per source and over all sources.
    const names = new Map<string, Int32Array>()
    for (const e of this.seenAt.values()) {
      let a = names.get(e.source)
      if (!a) names.set(e.source, (a = new Int32Array(N)))
      for (let n = 0; n < e.d.length; n++) a[n]! += e.d[n]!
    }
    const allNames = new Int32Array(N)
    const nameRow = (source: string, n: number, d: number) => {
      q.nameAdd.run(source, cat.nameOf[n]!, d, at)
      if (d < 0) q.nameDrop.run(source, cat.nameOf[n]!)
    }
    for (const [source, a] of names)
      for (let n = 0; n < a.length; n++) {
        if (!a[n]) continue
        allNames[n]! += a[n]!
        nameRow(source, n, a[n]!)
      }
    for (let n = 0; n < N; n++) if (allNames[n]) nameRow(ALL, n, allNames[n]!)
    for (const [source, a] of verTouched) for (let n = 0; n < N; n++) if (a[n]) q.versions.run(source, cat.nameOf[n]!)
    // last_seen: the latest collection time that still has holders, per source and then over all sources.
    const seenTouched = new Map<string, Uint8Array>()
    for (const e of this.seenAt.values())
      for (let n = 0; n < e.d.length; n++) {
        const d = e.d[n]!
        if (!d) continue
        q.seenAdd.run(e.source, cat.nameOf[n]!, e.at, d)
        if (d < 0) q.seenDrop.run(e.source, cat.nameOf[n]!, e.at)
        touch(seenTouched, e.source, n)
      }
    const rollUp = new Uint8Array(N)
    for (const [source, a] of seenTouched)
      for (let n = 0; n < N; n++) {
        if (!a[n]) continue
        q.seen.run(source, cat.nameOf[n]!)
        rollUp[n] = 1
      }
    for (let n = 0; n < N; n++) if (rollUp[n]) q.seenAll.run(cat.nameOf[n]!)
    return dropped
  }
}
