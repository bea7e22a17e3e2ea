/**
 * The count deltas of one PackageSetWriter flush, summed in typed arrays over catalog indexes, and their application
 * to package_versions, package_stats and package_seen with as few statements as the changes allow: a row is written
 * only when its count moves, version_count is counted in memory (from the writer's copy of the version counts) for
 * names that gained or lost a version row, and last_seen is recomputed from package_seen only when the rows it came
 * from were emptied.
 */
import type { Queryable } from '../../db/engine'
import type { PackageCatalog } from './catalog'
import { grow } from '../../lib/slot-table'
import type { AggregateIo } from './flush-io'
import { twin } from '../../db/engine'
import { sqliteAggregateIo } from './flush-sqlite'
import { postgresAggregateIo } from './flush-postgres'

const ALL = ''

/** Per source and key (package_versions), and per source, collection time and name (package_seen). */
export class Deltas {
  private ver = new Map<string, Int32Array>()
  private seenAt = new Map<string, { source: string; at: number; d: Int32Array }>()
  /** Keys added to package_keys in this flush. */
  readonly inserted: number[] = []
  /** package_keys ids deleted in this flush (no minion holds them any more). */
  readonly pruned: number[] = []

  constructor(private cat: PackageCatalog, private counts: Map<string, Int32Array>) {}

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

  /** Writes the deltas to the aggregate tables and drops keys nobody holds any more. */
  async apply(q: Queryable, at: number) {
    // The steps hand their rows to the engine's writes, which run them at once or send them by the chunk (flush-io.ts).
    const io = twin(q, { sqlite: sqliteAggregateIo, postgres: postgresAggregateIo })(q)
    const touched = this.applyVersions(io)
    const { gained, emptied, sources } = this.applySeenRows(io)
    // last_seen needs to know which package_seen rows emptied: their deletes' results. Every package_stats call
    // comes after, so PostgreSQL's writes send each stats row once per flush (flush-postgres.ts).
    await io.settle()
    this.applyNames(io, at)
    this.recountVersions(io, touched)
    this.applyLastSeen(io, sources, gained, emptied)
    this.prune(io)
    await io.settle()
  }

  /** The writer's version counts of one source, sized to the catalog. */
  private countsOf(source: string): Int32Array {
    let c = this.counts.get(source)
    if (!c || c.length < this.cat.keys.size) this.counts.set(source, (c = c ? grow(c, this.cat.keys.size) : new Int32Array(this.cat.keys.size)))
    return c
  }

  /** package_versions per source; returns, per source, the names that gained or lost a version row. */
  private applyVersions(io: AggregateIo): PerSource<Uint8Array> {
    const cat = this.cat
    const touched = new PerSource(cat.names.size, Uint8Array)
    for (const [source, d] of this.ver) {
      const c = this.countsOf(source)
      for (let k = 0; k < d.length; k++) {
        if (!d[k]) continue
        const before = c[k]!
        const after = (c[k] = before + d[k]!)
        if (after < 0) throw new Error('package version counts went negative; the stored sets and aggregates disagree')
        const name = cat.nameOf[cat.keyName[k]!]!
        if (before && after) io.versionUpd(source, name, cat.versionOf[k]!, cat.archOf[k]!, after)
        else {
          if (after) io.versionIns(source, name, cat.versionOf[k]!, cat.archOf[k]!, after)
          else io.versionDel(source, name, cat.versionOf[k]!, cat.archOf[k]!)
          touched.of(source)[cat.keyName[k]!] = 1
        }
      }
    }
    return touched
  }

  /** version_count (distinct version strings with holders) of the names whose version rows came or went. */
  private recountVersions(io: AggregateIo, touched: PerSource<Uint8Array>) {
    const cat = this.cat
    const distinct = (n: number, sources: Int32Array[]) => {
      const v = new Set<string>()
      cat.keysOfName(n, (k) => {
        if (sources.some((c) => (c[k] ?? 0) > 0)) v.add(cat.versionOf[k]!)
      })
      return v.size
    }
    const any = new Uint8Array(cat.names.size)
    for (const [source, t] of touched.all()) {
      const c = [this.countsOf(source)]
      for (let n = 0; n < t.length; n++) if (t[n]) io.versionCount(source, cat.nameOf[n]!, distinct(n, c)), (any[n] = 1)
    }
    const all = [...this.counts.values()]
    for (let n = 0; n < any.length; n++) if (any[n]) io.versionCount(ALL, cat.nameOf[n]!, distinct(n, all))
  }

  /** Keys whose counts moved (or that were stored in this flush) and that no source holds any more leave package_keys. */
  private prune(io: AggregateIo) {
    const cat = this.cat
    const all = [...this.counts.values()]
    const check = (k: number) => {
      if (!cat.keyId[k] || all.some((c) => (c[k] ?? 0) > 0)) return
      io.deleteKey(cat.keyId[k]!)
      this.pruned.push(cat.keyId[k]!)
      cat.setId(k, 0)
    }
    for (const d of this.ver.values()) for (let k = 0; k < d.length; k++) if (d[k]) check(k)
    for (const k of this.inserted) check(k)
  }

  /** minion_count per source and over all sources: the sum of each name's seen deltas over the collection times. */
  private applyNames(io: AggregateIo, at: number) {
    const N = this.cat.names.size
    const per = new PerSource(N, Int32Array)
    const all = per.of(ALL)
    for (const e of this.seenAt.values()) {
      const a = per.of(e.source)
      for (let n = 0; n < N; n++) if (e.d[n]) (a[n]! += e.d[n]!), (all[n]! += e.d[n]!)
    }
    for (const [source, a] of per.all())
      for (let n = 0; n < N; n++) {
        if (!a[n]) continue
        io.statsAdd(source, this.cat.nameOf[n]!, a[n]!, at)
        if (a[n]! < 0) io.statsDrop(source, this.cat.nameOf[n]!)
      }
  }

  /**
   * package_seen, then last_seen: raised to a collection time that gained holders when that is later, and recomputed
   * from package_seen only where a row at or after the current last_seen was emptied. The all-sources row follows.
   * This step writes package_seen and notes, per source and name, the latest time gained and emptied.
   */
  private applySeenRows(io: AggregateIo) {
    const cat = this.cat
    const N = cat.names.size
    const gained = new PerSource(N, Float64Array)
    const emptied = new PerSource(N, Float64Array)
    for (const e of this.seenAt.values()) {
      const g = gained.of(e.source)
      const x = emptied.of(e.source)
      for (let n = 0; n < N; n++) {
        const d = e.d[n]!
        if (!d) continue
        io.seenAdd(e.source, cat.nameOf[n]!, e.at, d)
        if (d > 0) g[n] = Math.max(g[n]!, e.at)
        else io.seenDrop(e.source, cat.nameOf[n]!, e.at, () => void (x[n] = Math.max(x[n]!, e.at)))
      }
    }
    return { gained, emptied, sources: new Set([...gained.all().keys(), ...emptied.all().keys()]) }
  }

  /** last_seen from the times applySeenRows noted (after its writes, whose results it needs). */
  private applyLastSeen(io: AggregateIo, sources: Set<string>, gained: PerSource<Float64Array>, emptied: PerSource<Float64Array>) {
    const cat = this.cat
    const N = cat.names.size
    const raisedTo = new Float64Array(N)
    const emptiedAt = new Float64Array(N)
    for (const source of sources) {
      const g = gained.of(source)
      const x = emptied.of(source)
      for (let n = 0; n < N; n++) {
        // Not only when this row moved: a source row created in this flush already carries the time.
        if (g[n]) io.raise(source, cat.nameOf[n]!, g[n]!), (raisedTo[n] = Math.max(raisedTo[n]!, g[n]!))
        if (x[n]) io.recompute(source, cat.nameOf[n]!, x[n]!), (emptiedAt[n] = Math.max(emptiedAt[n]!, x[n]!))
      }
    }
    // The source row may be gone with its holders, so the all-sources row checks the emptied times itself.
    for (let n = 0; n < N; n++) {
      if (raisedTo[n]) io.raise(ALL, cat.nameOf[n]!, raisedTo[n]!)
      if (emptiedAt[n]) io.recomputeAll(cat.nameOf[n]!, emptiedAt[n]!)
    }
  }
}

/** One typed array per source, created on first use. */
class PerSource<T extends Uint8Array | Int32Array | Float64Array> {
  private m = new Map<string, T>()
  constructor(private n: number, private make: new (n: number) => T) {}
  of(source: string): T {
    let a = this.m.get(source)
    if (!a) this.m.set(source, (a = new this.make(this.n)))
    return a
  }
  all() {
    return this.m
  }
}
