/**
 * Stores collected package sets. Each minion's set is one row (package_keys ids in a blob); a flush diffs every queued
 * set against the stored one in memory and applies the summed count deltas to package_versions, package_stats and
 * package_seen, all in one transaction, so the aggregates cost one statement per changed key or name per flush rather
 * than per package row.
 */
import type { AppDeps } from '../../deps'
import { PackageCatalog } from './catalog'
import { grow } from '../../lib/slot-table'
import { Deltas } from './deltas'
import { decodeKeyIds, HolderChanges } from './holders'
import { watchPackageSets, type SetChange } from '../vulns/watch'
import type { Queryable } from '../../db/engine'
import { allKeys, allVersionCounts, bumpInventoryGeneration, setSaltSource, type StoredSet } from './set-store'
import { inventoryGeneration } from './package-store'
import type { KeyRow, SetIo, SetToStore } from './flush-io'
import { twin } from '../../db/engine'
import { sqliteSetIo } from './flush-sqlite'
import { postgresSetIo } from './flush-postgres'

/** One installed package version. */
export interface Pkg {
  name: string
  version: string
  arch?: string
}


/** A queued set: a minion's key indexes (each once), its source and the salt source it was collected through. */
interface Pending {
  minionId: string
  source: string
  saltSource: string
  keys: Int32Array
}

/**
 * Minions per window of a flush: their stored sets are read, their new keys stored and their sets written together
 * (on PostgreSQL a few statements per window instead of a round trip per minion; a few MB of sets in memory).
 */
const WINDOW = 512

/** Accumulates package sets (as catalog key indexes) and stores them with every aggregate in one transaction per flush. */
export class PackageSetWriter {
  readonly catalog = new PackageCatalog()
  private pending: Pending[] = []
  private generation = -1
  /** minion_count of every package_versions row, per source and key index (the writer's copy, reloaded with the ids). */
  private counts = new Map<string, Int32Array>()
  private keyStamp = new Int32Array(1024)
  private nameStamp = new Int32Array(1024)
  /** Per key index: the tick at which the set being replaced held it (diffing old against new for the holder index). */
  private heldStamp = new Int32Array(1024)
  /** The key indexes of the set being replaced, in its order (scratch). */
  private oldKeys = new Int32Array(2048)
  private tick = 0
  /** The salt source (master) the sets queued from now on were collected through (contract §15 "Several masters"). */
  saltSource = 'default'

  private constructor(private deps: AppDeps) {}

  /**
   * A writer with the stored ids and counts loaded before any set is queued: the catalog then numbers the stored names
   * in the database's name order, and a flush's per-name writes (package_stats, package_seen, package_versions) walk their
   * B-trees in that order. Names numbered as a salt answer happened to list them made each of those writes land on
   * another page, about twice their cost (bench/RESULTS.md session 14). A flush reloads if another writer moved the
   * generation meanwhile (read first here, so a load that overlaps another's flush is stale, never taken as current).
   */
  static async open(deps: AppDeps): Promise<PackageSetWriter> {
    const w = new PackageSetWriter(deps)
    await w.load(deps.db)
    return w
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
    this.pending.push({ minionId, source, saltSource: this.saltSource, keys: m === n ? out : out.slice(0, m) })
  }

  /** Queues one minion's set given as package rows. */
  addPackages(minionId: string, source: string, packages: Pkg[]) {
    this.add(minionId, source, packages.map((p) => this.catalog.keyOf(p.name, p.version, p.arch ?? '')))
  }

  /** Stores every queued set, collected at `collectedAt`, with the aggregates, in one transaction; returns the rows stored. */
  async flush(collectedAt = this.deps.clock.now()): Promise<number> {
    const sets = this.pending
    this.pending = []
    if (!sets.length) return 0
    let stored = 0
    try {
      await this.deps.db.tx(async (tx) => {
        if ((await inventoryGeneration(tx)) !== this.generation) await this.load(tx)
        const d = new Deltas(this.catalog, this.counts)
        const holders = await HolderChanges.open(tx)
        const io = twin(tx, { sqlite: sqliteSetIo, postgres: postgresSetIo })(tx)
        const changes: SetChange[] = []
        for (const w of windows(sets)) {
          stored += await this.replaceWindow(io, w, collectedAt, d, holders, changes)
          if (holders.full) await holders.apply()
        }
        await d.apply(tx, collectedAt)
        await holders.apply()
        await recordSaltSources(tx, sets)
        // Keys inserted and pruned within this flush have their id cleared by the prune: only the kept ones are new.
        const inserted = d.inserted.map((k) => this.catalog.keyId[k]!).filter((id) => id > 0)
        await watchPackageSets(this.deps, tx, { changes, inserted, pruned: d.pruned })
        // Every flush moves the generation, so another writer reloads its copy of ids and counts before it diffs.
        this.generation = await bumpInventoryGeneration(tx)
      })
    } catch (e) {
      // Ids and counts changed inside the rolled-back transaction are void: reload them before the next flush.
      this.generation = -1
      throw e
    }
    return stored
  }

  /**
   * Diffs a window's sets against the stored ones into `d` and writes them; returns their size. The statements are
   * the window's few awaits; the loops over a set's keys are synchronous methods, which SQLite's flush needs to stay as
   * fast as it was.
   */
  private async replaceWindow(io: SetIo, sets: Pending[], at: number, d: Deltas, holders: HolderChanges, changes: SetChange[]): Promise<number> {
    const cat = this.catalog
    const old = await io.read(sets.map((s) => s.minionId), this.deps.clock.now())
    // Keys the database lacks are stored first: their ids go into the sets' blobs.
    const missing = this.unstored(sets)
    if (missing.length) {
      const ids = await io.insertKeys(missing.map((k): KeyRow => [cat.nameOf[cat.keyName[k]!]!, cat.versionOf[k]!, cat.archOf[k]!]))
      missing.forEach((k, i) => (cat.setId(k, ids[i]!), d.inserted.push(k)))
    }
    const updates: SetToStore[] = []
    const inserts: SetToStore[] = []
    const fresh: { s: Pending; keys: Uint8Array; heldTick: number }[] = []
    let size = 0
    for (const s of sets) {
      const o = old.get(s.minionId)
      const { blob, heldTick, oldCount } = this.diff(s, o, at, d)
      const row = { minionId: s.minionId, source: s.source, collectedAt: at, keys: blob }
      // A stored set's holders move now, while diff's marks of its old keys are current; a new set's need its number.
      if (o) updates.push(row), this.moveHolders(s, o, o.num, blob, heldTick, oldCount, holders, changes)
      else inserts.push(row), fresh.push({ s, keys: blob, heldTick })
      size += s.keys.length
    }
    const nums = await io.write(updates, inserts)
    fresh.forEach((f, i) => this.moveHolders(f.s, undefined, nums[i]!, f.keys, f.heldTick, 0, holders, changes))
    return size
  }

  /** The key indexes of a window's sets that have no package_keys id yet, each once, in the sets' order. */
  private unstored(sets: Pending[]): number[] {
    const out: number[] = []
    const ids = this.catalog.keyId
    if (this.keyStamp.length < this.catalog.keys.size) this.keyStamp = grow(this.keyStamp, this.catalog.keys.size)
    const stamp = this.keyStamp
    const t = ++this.tick
    for (const s of sets)
      for (let i = 0; i < s.keys.length; i++) {
        const k = s.keys[i]!
        if (!ids[k] && stamp[k] !== t) (stamp[k] = t), out.push(k)
      }
    return out
  }

  /** Counts the old set out of and the new one into `d`, and encodes the new one's blob (every key stored by now). */
  private diff(s: Pending, old: StoredSet | undefined, at: number, d: Deltas) {
    const cat = this.catalog
    if (this.nameStamp.length < cat.names.size) this.nameStamp = grow(this.nameStamp, cat.names.size)
    if (this.heldStamp.length < cat.keys.size) this.heldStamp = grow(this.heldStamp, cat.keys.size)
    const names = this.nameStamp
    const held = this.heldStamp
    const heldTick = ++this.tick
    const oldCount = old ? old.keys.byteLength >> 2 : 0
    if (this.oldKeys.length < oldCount) this.oldKeys = new Int32Array(oldCount * 2)
    const oldKeys = this.oldKeys
    if (old) {
      const ver = d.versions(old.source)
      const seen = d.seen(old.source, old.collected_at)
      const t = ++this.tick
      const view = new DataView(old.keys.buffer, old.keys.byteOffset, old.keys.byteLength)
      for (let o = 0; o < old.keys.byteLength; o += 4) {
        const k = cat.indexOfId(view.getUint32(o, true))
        if (k < 0) throw new Error(`package set of ${s.minionId.slice(0, 100)} refers to an unknown package key`)
        ver[k]!--
        held[k] = heldTick
        oldKeys[o >> 2] = k
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
      view.setUint32(i * 4, cat.keyId[k]!, true)
    }
    return { blob, heldTick, oldCount }
  }

  /**
   * Holders move only for the keys the set gained or lost: a kept key's stamp turns negative so the old side skips it.
   * A new set's (no old keys) may move later: no later diff marks a key with its tick.
   */
  private moveHolders(s: Pending, old: StoredSet | undefined, num: number, blob: Uint8Array, heldTick: number, oldCount: number, holders: HolderChanges, changes: SetChange[]) {
    const cat = this.catalog
    const held = this.heldStamp
    const oldKeys = this.oldKeys
    let changed = false
    for (let i = 0; i < s.keys.length; i++) {
      const k = s.keys[i]!
      if (held[k] === heldTick) held[k] = -heldTick
      else (changed = true), holders.add(cat.keyId[k]!, num)
    }
    for (let i = 0; i < oldCount; i++) {
      const k = oldKeys[i]!
      if (held[k] === heldTick) (changed = true), holders.remove(cat.keyId[k]!, num)
    }
    if (changed || !old) changes.push({ num, minionId: s.minionId, before: old ? decodeKeyIds(old.keys) : null, after: new Uint32Array(blob.buffer) })
  }

  /** Loads every stored key id and version count (at start, and after another writer flushed). */
  private async load(q: Queryable) {
    const cat = this.catalog
    cat.clearIds()
    this.counts.clear()
    this.generation = await inventoryGeneration(q)
    for (const { id, name, version, arch } of await allKeys(q)) cat.setId(cat.keyOf(name, version, arch), id)
    for (const { source, name, version, arch, minion_count: n } of await allVersionCounts(q)) {
      const k = cat.keyOf(name, version, arch)
      let c = this.counts.get(source)
      if (!c) this.counts.set(source, (c = new Int32Array(cat.keys.size + 1024)))
      if (k >= c.length) this.counts.set(source, (c = grow(c, k + 1)))
      c[k] = n
    }
  }
}

/** The queued sets in windows of at most WINDOW, each minion once per window (a second set of one minion diffs against the first as stored). */
function* windows(sets: Pending[]): Generator<Pending[]> {
  let w: Pending[] = []
  let ids = new Set<string>()
  for (const s of sets) {
    if (w.length >= WINDOW || ids.has(s.minionId)) yield w, (w = []), (ids = new Set())
    w.push(s)
    ids.add(s.minionId)
  }
  if (w.length) yield w
}

/** Records the salt source each stored set came through: one statement per source among the sets (almost always one). */
async function recordSaltSources(q: Queryable, sets: Pending[]) {
  const by = new Map<string, string[]>()
  for (const p of sets) {
    const ids = by.get(p.saltSource)
    if (ids) ids.push(p.minionId)
    else by.set(p.saltSource, [p.minionId])
  }
  for (const [source, ids] of by) await setSaltSource(q, ids, source)
}
