/**
 * Findings kept current. A finding is stored per package key and ecosystem (`vuln_matches`: this key is affected by
 * this record in this ecosystem), never per minion; a record's minion count and each minion's summary are kept by
 * diffing a minion's record set before and after its package set (or ecosystem) changes, and recounted whole only
 * when the matches themselves change (a feed import, learned source packages).
 */
import { twin, type Engine, type Queryable } from '../../db/engine'
import { decodeKeyIds } from '../inventory/holders'
import { evaluate, type RangeEvent } from './ranges'
import { versionOrder } from './ecosystem'
import { allMatches, countedSetsAfter, findingsGeneration, generationsStamp, moveFindingsGeneration } from './findings-store'
import type { ChangeIo, MatchIo, TallyIo } from './findings-io'
import { sqliteChangeIo, sqliteMatchIo, sqliteTallyIo } from './findings-sqlite'
import { postgresChangeIo, postgresMatchIo, postgresTallyIo } from './findings-postgres'

/** Severity ranks: what `worst` stores and alert thresholds compare (unknown never reaches a threshold). */
export const SEVERITY_RANK: Record<string, number> = { unknown: 0, none: 1, low: 2, medium: 3, high: 4, critical: 5 }
export const RANK_SEVERITY = ['unknown', 'none', 'low', 'medium', 'high', 'critical'] as const

/**
 * vuln_matches in memory: ecosystem → key id → record indexes (a sparse array by key id: a recount looks up every
 * key of every set, 75 million lookups at 50,000 minions, and an array index is several times cheaper than a Map's);
 * reloaded when the findings' generation moves.
 */
export class MatchIndex {
  readonly ids: string[] = []
  readonly rank: number[] = []
  private readonly idx = new Map<string, number>()
  readonly byEco = new Map<string, (number[] | undefined)[]>()
  size = 0

  constructor(public generation: number) {}

  /** The index of a record id (added on first sight with its severity rank). */
  vuln(id: string, rank: number): number {
    let i = this.idx.get(id)
    if (i === undefined) this.idx.set(id, (i = this.ids.length)), this.ids.push(id), this.rank.push(rank)
    return i
  }

  /** Forgets every match of a key (it left package_keys, or is matched again). */
  dropKey(keyId: number) {
    for (const m of this.byEco.values()) {
      const list = m[keyId]
      if (list) (this.size -= list.length), (m[keyId] = undefined)
    }
  }

  /** Adds one match. */
  add(eco: string, keyId: number, vuln: number) {
    let m = this.byEco.get(eco)
    if (!m) this.byEco.set(eco, (m = []))
    const list = m[keyId]
    if (list) list.push(vuln)
    else m[keyId] = [vuln]
    this.size++
  }
}

/** The index of one connection (SQLite's one, or a PostgreSQL transaction's), with the generation it was loaded at. */
let cached: { db: unknown; index: MatchIndex } | null = null

/** The match index, loaded from vuln_matches when this process has none or another process changed the findings. */
export async function matchIndex(q: Queryable): Promise<MatchIndex> {
  const g = await findingsGeneration(q)
  if (cached && cached.db === q.native.client && cached.index.generation === g) return cached.index
  const index = new MatchIndex(g)
  for (const m of await allMatches(q)) index.add(m.ecosystem, m.key_id, index.vuln(m.vuln_id, SEVERITY_RANK[m.severity] ?? 0))
  cached = { db: q.native.client, index }
  return index
}

/**
 * Moves the findings' generation (inside the transaction that changed vuln_matches). The cached index is dropped, or
 * kept when the caller already applied the same change to it (a flush's few new and gone keys), so a one-minion
 * change does not reload every match.
 */
export async function bumpGeneration(q: Queryable, updated?: MatchIndex) {
  await moveFindingsGeneration(q)
  if (updated && cached?.db === q.native.client && cached.index === updated) updated.generation = await findingsGeneration(q)
  else cached = null
}

/** Per-minion scratch: which record indexes one set reaches. */
export class VulnSet {
  private stamp = new Int32Array(1024)
  private tick = 0
  readonly list: number[] = []

  /** The records reached by key ids `ids` in ecosystem `eco` (the list is reused by the next call). */
  of(index: MatchIndex, eco: string | null, ids: ArrayLike<number> | null): number[] {
    this.list.length = 0
    const byKey = eco ? index.byEco.get(eco) : undefined
    if (!byKey || !ids) return this.list
    if (this.stamp.length < index.ids.length) this.stamp = new Int32Array(Math.max(index.ids.length, this.stamp.length * 2))
    const t = ++this.tick
    for (let i = 0; i < ids.length; i++) {
      const vs = byKey[ids[i]!]
      if (!vs) continue
      for (const v of vs) if (this.stamp[v] !== t) (this.stamp[v] = t), this.list.push(v)
    }
    return this.list
  }
}

/** One minion's summary after a change: what alerts read. */
export interface MinionSummary {
  num: number
  minionId: string
  count: number
  worst: number
}

/** Worst rank and count of a record list. */
function summarise(index: MatchIndex, list: number[]): { count: number; worst: number } {
  let worst = 0
  for (const v of list) if (index.rank[v]! > worst) worst = index.rank[v]!
  return { count: list.length, worst }
}

/**
 * The reads and writes of the minions in `changes` on the engine `q` runs on (PostgreSQL reads them all now and
 * buffers the writes until `finish`).
 */
export function changeIo(q: Queryable, changes: { num: number; minionId: string }[]): Promise<ChangeIo> {
  return twin(q, { sqlite: async () => sqliteChangeIo(q), postgres: () => postgresChangeIo(q, changes) })()
}

/**
 * Applies one minion's change to the record counts and its summary: records reached before (old set, old ecosystem)
 * and after (new set, new ecosystem) are diffed, so only records that gained or lost this minion move. Synchronous:
 * it runs in the callers' loops over minions, whose writes `io` runs at once (SQLite) or buffers (PostgreSQL).
 */
export function applyMinionChange(io: ChangeIo, index: MatchIndex, scratch: { a: VulnSet; b: VulnSet }, c: {
  num: number; minionId: string; oldEco: string | null; newEco: string | null; before: ArrayLike<number> | null; after: ArrayLike<number> | null
}): MinionSummary {
  const before = scratch.a.of(index, c.oldEco, c.before)
  const after = scratch.b.of(index, c.newEco, c.after)
  if (before.length || after.length) {
    const was = new Set(before)
    const now = new Set(after)
    for (const v of after) if (!was.has(v)) io.bump(index.ids[v]!, 1)
    for (const v of before) if (!now.has(v)) io.bump(index.ids[v]!, -1)
  }
  const s = summarise(index, after)
  io.summary(c.num, c.minionId, c.newEco, s.count, s.worst)
  return { num: c.num, minionId: c.minionId, ...s }
}

/** What a recount found: each minion's summary, each record's minions, and the generations it read them at. */
interface Tally {
  stamp: string
  minions: MinionSummary[]
  counts: Int32Array
  ids: string[]
}

/** The sets' and the findings' generations together: what a tally or a cache of minion ecosystems was read at. */
export const stampOf = (q: Queryable) => generationsStamp(q)

/** Sets per page of a tally: the sets are read a page at a time, never all at once. */
const TALLY_PAGE = 1000

/** Counts every minion's records from the stored sets (reads only); the stamp is read first, so a change made while it reads moves it. */
async function tally(q: Queryable): Promise<Tally> {
  const stamp = await stampOf(q)
  const index = await matchIndex(q)
  const counts = new Int32Array(index.ids.length)
  const scratch = new VulnSet()
  const minions: MinionSummary[] = []
  for (let after = -1; ; ) {
    const page = await countedSetsAfter(q, after, TALLY_PAGE)
    if (!page.length) break
    for (const r of page) {
      const list = scratch.of(index, r.eco, decodeKeyIds(r.keys))
      for (const v of list) counts[v]!++
      minions.push({ num: r.num, minionId: r.minion_id, ...summarise(index, list) })
    }
    after = page[page.length - 1]!.num
  }
  return { stamp, minions, counts, ids: index.ids }
}

/** Writes a tally's summaries and counts. */
async function writeTally(q: Queryable, t: Tally) {
  const io: TallyIo = twin(q, { sqlite: sqliteTallyIo, postgres: postgresTallyIo })(q)
  writeTallyRows(io, t)
  await io.finish()
}

/** A tally's rows handed to `io` (a synchronous loop over every minion and record). */
function writeTallyRows(io: TallyIo, t: Tally) {
  for (const m of t.minions) io.minion(m.num, m.count, m.worst)
  io.clear()
  for (let v = 0; v < t.counts.length; v++) if (t.counts[v]) io.count(t.ids[v]!, t.counts[v]!)
}

/** Recounts every record's minions and every minion's summary from the sets, inside the caller's transaction. */
export async function recountAll(q: Queryable): Promise<MinionSummary[]> {
  const t = await tally(q)
  await writeTally(q, t)
  return t.minions
}

/**
 * Recounts with the write lock held only for the writes: the tally is read outside any transaction (its stamp read
 * first), then written in a short transaction if neither the sets nor the findings moved since the stamp (every
 * change to either moves it), else read again. A CLI import beside a running service thus never holds the lock for
 * the seconds a 50,000-minion tally takes (the service's writes wait at most the 5 s busy timeout).
 */
export async function recountOutside(db: Engine): Promise<{ writeMs: number; attempts: number }> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const t = await tally(db)
    const w0 = performance.now()
    if (await db.tx(async (tx) => (await stampOf(tx)) === t.stamp && (await writeTally(tx, t), true))) return { writeMs: performance.now() - w0, attempts: attempt }
  }
  const w0 = performance.now()
  await db.tx((tx) => recountAll(tx))
  return { writeMs: performance.now() - w0, attempts: 6 }
}

/**
 * Matches package keys against the stored affected entries (every ecosystem, or only `ecosystems`): a key is matched by
 * its source package name when one was learned, else by its own name. Replaces those keys' matches in those
 * ecosystems; returns whether any match was removed or added.
 */
export async function matchKeys(q: Queryable, keyIds: Iterable<number>, ecosystems: Set<string> | null = null, index?: MatchIndex): Promise<boolean> {
  // On PostgreSQL a key named twice is matched once: its rows are written by one statement, which cannot touch a row twice.
  const ids = q.engine === 'sqlite' ? keyIds : [...new Set(keyIds)]
  const io: MatchIo = await twin(q, { sqlite: async () => sqliteMatchIo(q), postgres: () => postgresMatchIo(q, ids as number[], !!index) })()
  const changed = matchLoop(io, ids, ecosystems, index)
  return (await io.finish()) || changed
}

/** matchKeys' loop over the keys, synchronous: `io` answers reads at once and runs or buffers writes. */
function matchLoop(io: MatchIo, keyIds: Iterable<number>, ecosystems: Set<string> | null, index?: MatchIndex): boolean {
  // Entries of one package name are parsed once per call, however many keys (versions) share it.
  const parsed = new Map<string, { ecosystem: string; vuln: string; ranges: RangeEvent[][]; versions: string[] }[]>()
  let changed = false
  for (const id of keyIds) {
    const k = io.key(id)
    if (io.drop(id, ecosystems)) changed = true
    // An index kept in step is only given whole-key changes (no ecosystem subset): the key's matches are made anew.
    index?.dropKey(id)
    if (!k) continue
    const pkg = k.source_name || k.name
    let list = parsed.get(pkg)
    if (!list) {
      list = io.entries(pkg).map((e) => ({ ecosystem: e.ecosystem, vuln: e.vuln_id, ranges: JSON.parse(e.ranges) as RangeEvent[][], versions: JSON.parse(e.versions) as string[] }))
      parsed.set(pkg, list)
    }
    for (const e of list) {
      if (ecosystems && !ecosystems.has(e.ecosystem)) continue
      const verdict = evaluate(k.version, e.ranges, e.versions, versionOrder(e.ecosystem))
      if (!verdict.affected) continue
      io.add(e.ecosystem, id, e.vuln, pkg, verdict.fixed)
      index?.add(e.ecosystem, id, index.vuln(e.vuln, SEVERITY_RANK[io.severity(e.vuln) ?? ''] ?? 0))
      changed = true
    }
  }
  return changed
}
