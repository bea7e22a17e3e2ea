/**
 * Findings kept current. A finding is stored per package key and ecosystem (`vuln_matches`: this key is affected by
 * this record in this ecosystem), never per minion; a record's minion count and each minion's summary are kept by
 * diffing a minion's record set before and after its package set (or ecosystem) changes, and recounted whole only
 * when the matches themselves change (a feed import, learned source packages).
 */
import type { Database } from 'bun:sqlite'
import { decodeKeyIds } from '../inventory/holders'
import { evaluate, type RangeEvent } from './ranges'
import { versionOrder } from './ecosystem'

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

let cached: { db: Database; index: MatchIndex } | null = null

const generationOf = (db: Database) => db.query<{ g: number }, []>('SELECT generation AS g FROM vuln_generation WHERE id = 1').get()?.g ?? 0

/** The match index, loaded from vuln_matches when this process has none or another process changed the findings. */
export function matchIndex(db: Database): MatchIndex {
  const g = generationOf(db)
  if (cached && cached.db === db && cached.index.generation === g) return cached.index
  const index = new MatchIndex(g)
  for (const [eco, key, vuln, severity] of db.query<[string, number, string, string], []>(
    'SELECT m.ecosystem, m.key_id, m.vuln_id, r.severity FROM vuln_matches m JOIN vuln_records r ON r.id = m.vuln_id',
  ).values() as [string, number, string, string][]) index.add(eco, key, index.vuln(vuln, SEVERITY_RANK[severity] ?? 0))
  cached = { db, index }
  return index
}

/**
 * Moves the findings' generation (inside the transaction that changed vuln_matches). The cached index is dropped, or
 * kept when the caller already applied the same change to it (a flush's few new and gone keys), so a one-minion
 * change does not reload every match.
 */
export function bumpGeneration(db: Database, updated?: MatchIndex) {
  db.run('UPDATE vuln_generation SET generation = generation + 1 WHERE id = 1')
  if (updated && cached?.db === db && cached.index === updated) updated.generation = generationOf(db)
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
 * Applies one minion's change to the record counts and its summary: records reached before (old set, old ecosystem)
 * and after (new set, new ecosystem) are diffed, so only records that gained or lost this minion move.
 */
export function applyMinionChange(db: Database, index: MatchIndex, scratch: { a: VulnSet; b: VulnSet }, c: {
  num: number; minionId: string; oldEco: string | null; newEco: string | null; before: ArrayLike<number> | null; after: ArrayLike<number> | null
}): MinionSummary {
  const before = scratch.a.of(index, c.oldEco, c.before)
  const after = scratch.b.of(index, c.newEco, c.after)
  if (before.length || after.length) {
    const bump = db.query('UPDATE vuln_records SET minion_count = minion_count + ?2 WHERE id = ?1')
    const was = new Set(before)
    const now = new Set(after)
    for (const v of after) if (!was.has(v)) bump.run(index.ids[v]!, 1)
    for (const v of before) if (!now.has(v)) bump.run(index.ids[v]!, -1)
  }
  const s = summarise(index, after)
  db.query(`INSERT INTO vuln_minions (minion_num, minion_id, ecosystem, vuln_count, worst) VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (minion_num) DO UPDATE SET minion_id = excluded.minion_id, ecosystem = excluded.ecosystem, vuln_count = excluded.vuln_count, worst = excluded.worst`)
    .run(c.num, c.minionId, c.newEco, s.count, s.worst)
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
export const stampOf = (db: Database) =>
  db.query<{ s: string }, []>("SELECT (SELECT generation FROM package_key_generation WHERE id = 1) || ':' || (SELECT generation FROM vuln_generation WHERE id = 1) AS s").get()!.s

/** Counts every minion's records from the stored sets (reads only). */
function tally(db: Database): Tally {
  const index = matchIndex(db)
  const counts = new Int32Array(index.ids.length)
  const scratch = new VulnSet()
  const minions: MinionSummary[] = []
  for (const r of db.query<{ num: number; minion_id: string; keys: Uint8Array; eco: string | null }, []>(
    'SELECT s.rowid AS num, s.minion_id, s.keys, v.ecosystem AS eco FROM minion_package_sets s JOIN vuln_minions v ON v.minion_num = s.rowid',
  ).iterate()) {
    const list = scratch.of(index, r.eco, decodeKeyIds(r.keys))
    for (const v of list) counts[v]!++
    minions.push({ num: r.num, minionId: r.minion_id, ...summarise(index, list) })
  }
  return { stamp: stampOf(db), minions, counts, ids: index.ids }
}

/** Writes a tally's summaries and counts. */
function writeTally(db: Database, t: Tally) {
  const put = db.query('UPDATE vuln_minions SET vuln_count = ?2, worst = ?3 WHERE minion_num = ?1')
  for (const m of t.minions) put.run(m.num, m.count, m.worst)
  db.run('UPDATE vuln_records SET minion_count = 0 WHERE minion_count <> 0')
  const set = db.query('UPDATE vuln_records SET minion_count = ?2 WHERE id = ?1')
  for (let v = 0; v < t.counts.length; v++) if (t.counts[v]) set.run(t.ids[v]!, t.counts[v]!)
}

/** Recounts every record's minions and every minion's summary from the sets, inside the caller's transaction. */
export function recountAll(db: Database): MinionSummary[] {
  const t = tally(db)
  writeTally(db, t)
  return t.minions
}

/**
 * Recounts with the write lock held only for the writes: the tally is read in a read transaction (a snapshot, WAL),
 * then written in a short one if neither the sets nor the findings moved meanwhile, else read again. A CLI import
 * beside a running service thus never holds the lock for the seconds a 50,000-minion tally takes (the service's writes
 * wait at most the 5 s busy timeout).
 */
export function recountOutside(db: Database): { writeMs: number; attempts: number } {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const t = db.transaction(() => tally(db))()
    const w0 = performance.now()
    if (db.transaction(() => stampOf(db) === t.stamp && (writeTally(db, t), true)).immediate()) return { writeMs: performance.now() - w0, attempts: attempt }
  }
  const w0 = performance.now()
  db.transaction(() => recountAll(db)).immediate()
  return { writeMs: performance.now() - w0, attempts: 6 }
}

/** One affected entry as stored. */
interface StoredEntry {
  ecosystem: string
  vuln_id: string
  ranges: string
  versions: string
}

/**
 * Matches package keys against the stored affected entries (every ecosystem, or only `ecosystems`): a key is matched by
 * its source package name when one was learned, else by its own name. Replaces those keys' matches in those
 * ecosystems; returns whether any match was removed or added.
 */
export function matchKeys(db: Database, keyIds: Iterable<number>, ecosystems: Set<string> | null = null, index?: MatchIndex): boolean {
  const rank = db.query<{ severity: string }, [string]>('SELECT severity FROM vuln_records WHERE id = ?1')
  const key = db.query<{ name: string; version: string; source_name: string | null }, [number]>('SELECT name, version, source_name FROM package_keys WHERE id = ?1')
  const entries = db.query<StoredEntry, [string]>('SELECT ecosystem, vuln_id, ranges, versions FROM vuln_affected WHERE package = ?1')
  const drop = db.query('DELETE FROM vuln_matches WHERE key_id = ?1')
  const dropIn = db.query('DELETE FROM vuln_matches WHERE key_id = ?1 AND ecosystem = ?2')
  const add = db.query('INSERT OR REPLACE INTO vuln_matches (ecosystem, key_id, vuln_id, package, fixed) VALUES (?1, ?2, ?3, ?4, ?5)')
  // Entries of one package name are parsed once per call, however many keys (versions) share it.
  const parsed = new Map<string, { ecosystem: string; vuln: string; ranges: RangeEvent[][]; versions: string[] }[]>()
  let changed = false
  for (const id of keyIds) {
    const k = key.get(id)
    if (ecosystems) for (const e of ecosystems) changed = dropIn.run(id, e).changes > 0 || changed
    else changed = drop.run(id).changes > 0 || changed
    // An index kept in step is only given whole-key changes (no ecosystem subset): the key's matches are made anew.
    index?.dropKey(id)
    if (!k) continue
    const pkg = k.source_name || k.name
    let list = parsed.get(pkg)
    if (!list) {
      list = entries.all(pkg).map((e) => ({ ecosystem: e.ecosystem, vuln: e.vuln_id, ranges: JSON.parse(e.ranges) as RangeEvent[][], versions: JSON.parse(e.versions) as string[] }))
      parsed.set(pkg, list)
    }
    for (const e of list) {
      if (ecosystems && !ecosystems.has(e.ecosystem)) continue
      const verdict = evaluate(k.version, e.ranges, e.versions, versionOrder(e.ecosystem))
      if (!verdict.affected) continue
      add.run(e.ecosystem, id, e.vuln, pkg, verdict.fixed)
      index?.add(e.ecosystem, id, index.vuln(e.vuln, SEVERITY_RANK[rank.get(e.vuln)?.severity ?? ''] ?? 0))
      changed = true
    }
  }
  return changed
}
