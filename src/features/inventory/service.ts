/**
 * Package inventory. Each minion's package set is one row, replaced atomically by PackageSetWriter, which adjusts the
 * per-name and per-version aggregates in the same transaction, so the list endpoint reads aggregates and never groups
 * the raw sets.
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { containsPattern } from '../../lib/sql'
import { iso, isoOrNull } from '../../lib/clock'
import { PackageSetWriter, type Pkg } from './writer'
import { decodeKeyIds } from './holders'
import { SaltUnavailable } from '../../salt/errors'

export type { Pkg } from './writer'

/** One minion's complete package set, as collected. */
export interface PackageSet {
  minionId: string
  source: string
  packages: Pkg[]
}

/** The `source` of a minion from its os_family grain (contract §8). */
export function sourceOf(osFamily: string | null | undefined): string {
  if (!osFamily) return 'unknown'
  if (osFamily === 'Debian') return 'apt'
  if (osFamily === 'RedHat' || osFamily === 'Suse') return 'rpm'
  if (osFamily === 'Arch') return 'pacman'
  return osFamily.toLowerCase()
}

const ALL = ''

/** Replaces the package sets of several minions in one transaction; returns the number of rows stored. */
export function replacePackageSets(deps: AppDeps, sets: PackageSet[], collectedAt = deps.clock.now()): number {
  const w = new PackageSetWriter(deps)
  for (const s of sets) w.addPackages(s.minionId, s.source, s.packages)
  return w.flush(collectedAt)
}

/** Sort keys of the package list. */
export const PACKAGE_SORTS = ['name', 'minion_count', 'version_count', 'last_seen'] as const
type Sort = (typeof PACKAGE_SORTS)[number]

/** The fleet-wide package list: one row per name from the aggregates, filtered, sorted and paged. */
export function listPackages(deps: AppDeps, p: { q?: string; source?: string; sort?: Sort; order?: 'asc' | 'desc'; limit: number; offset: number }) {
  const sort = p.sort ?? 'name'
  const order = p.order ?? (sort === 'name' ? 'asc' : 'desc')
  const args: string[] = [p.source ?? ALL]
  let where = 'WHERE source = ?1'
  if (p.q) {
    args.push(containsPattern(p.q))
    where += ` AND name LIKE ?2 ESCAPE '\\'`
  }
  const db = deps.db.$client
  const total = keptCount(db, args.join('\0'), () => db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM package_stats ${where}`).get(...args)!.n)
  const orderBy = sort === 'name' ? `name ${order}` : `${sort} ${order}, name ASC`
  const rows = db.query<{ name: string; minion_count: number; version_count: number; last_seen: number }, SQLQueryBindings[]>(
    `SELECT name, minion_count, version_count, last_seen FROM package_stats ${where} ORDER BY ${orderBy} LIMIT ${p.limit} OFFSET ${p.offset}`,
  ).all(...args)
  return { total, items: rows.map((r) => ({ ...r, last_seen: iso(r.last_seen) })) }
}

/** Totals of the package list per (source, name filter), valid while the inventory generation stays (LRU-bounded). */
const keptCounts = new WeakMap<Database, { generation: number; totals: Map<string, number> }>()
const MAX_KEPT = 256

/**
 * A package-list total counted once per inventory generation: package_stats changes only in a writer's flush, which
 * moves the generation (in the database, so a change made by another process is seen too).
 */
function keptCount(db: Database, key: string, count: () => number): number {
  const generation = db.query<{ g: number }, []>('SELECT generation AS g FROM package_key_generation WHERE id = 1').get()?.g ?? 0
  let kept = keptCounts.get(db)
  if (!kept || kept.generation !== generation) keptCounts.set(db, (kept = { generation, totals: new Map() }))
  let n = kept.totals.get(key)
  if (n === undefined) {
    n = count()
    if (kept.totals.size >= MAX_KEPT) kept.totals.delete(kept.totals.keys().next().value!)
    kept.totals.set(key, n)
  }
  return n
}

/** The versions of one package name, most common first; null when no minion has it. */
export function packageVersions(deps: AppDeps, name: string, source?: string) {
  const rows = deps.db.$client.query<{ version: string; arch: string; source: string; minion_count: number }, SQLQueryBindings[]>(
    // package_versions is keyed by source first: the sources holding the name come from package_stats' name index.
    `SELECT version, arch, source, minion_count FROM package_versions
     WHERE name = ?1 AND ${source ? 'source = ?2' : "source IN (SELECT source FROM package_stats WHERE name = ?1 AND source <> '')"}
     ORDER BY minion_count DESC, version, arch, source`,
  ).all(...(source ? [name, source] : [name]))
  if (!rows.length) return null
  return { name, total: rows.length, versions: rows }
}

/** One minion's package rows by name, with a name filter and paging. */
export function minionPackages(deps: AppDeps, minionId: string, p: { q?: string; limit: number; offset: number }) {
  const db = deps.db.$client
  const set = db.query<{ source: string; collected_at: number; keys: Uint8Array }, [string]>('SELECT source, collected_at, keys FROM minion_package_sets WHERE minion_id = ?1').get(minionId)
  if (!set) return { minion_id: minionId, collected_at: null, total: 0, packages: [] }
  // The set's ids go to SQLite as one JSON array, so filter, order and paging stay in SQL.
  const args: string[] = [JSON.stringify(Array.from(decodeKeyIds(set.keys)))]
  let where = 'WHERE id IN (SELECT value FROM json_each(?1))'
  if (p.q) {
    args.push(containsPattern(p.q))
    where += ` AND name LIKE ?2 ESCAPE '\\'`
  }
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM package_keys ${where}`).get(...args)!.n
  const packages = db.query<{ name: string; version: string; arch: string }, SQLQueryBindings[]>(
    `SELECT name, version, arch FROM package_keys ${where} ORDER BY name, version, arch LIMIT ${p.limit} OFFSET ${p.offset}`,
  ).all(...args).map((r) => ({ ...r, source: set.source }))
  return { minion_id: minionId, collected_at: iso(set.collected_at), total, packages }
}

type RefreshRow = { id: string; started_at: number; finished_at: number | null; target: string; minions_asked: number; minions_answered: number; packages_stored: number; error: string | null }
const refreshOut = (r: RefreshRow | null) =>
  r && {
    refresh_id: r.id, started_at: iso(r.started_at), finished_at: isoOrNull(r.finished_at), target: r.target, minions_asked: r.minions_asked,
    minions_answered: r.minions_answered, packages_stored: r.packages_stored, error: r.error,
  }

/** Which of these minions have a package set collected at or after `since` (epoch ms). */
export function packagesCollectedSince(deps: AppDeps, ids: string[], since: number): Set<string> {
  const q = deps.db.$client.prepare<{ n: number }, [string, number]>('SELECT 1 AS n FROM minion_package_sets WHERE minion_id = ?1 AND collected_at >= ?2')
  return new Set(ids.filter((id) => q.get(id, since)))
}

/** Records the start of a refresh; null when one is already running. */
export function startRefresh(deps: AppDeps, target: string): { refresh_id: string; started_at: string } | null {
  const db = deps.db.$client
  const id = crypto.randomUUID()
  const now = deps.clock.now()
  let started = false
  db.transaction(() => {
    if (db.query('SELECT 1 FROM inventory_refreshes WHERE finished_at IS NULL').get()) return
    db.query('INSERT INTO inventory_refreshes (id, started_at, target) VALUES (?1, ?2, ?3)').run(id, now, target)
    started = true
  })()
  return started ? { refresh_id: id, started_at: iso(now) } : null
}

/** When a refresh started (epoch ms); null for an unknown id. */
export function refreshStartedAt(deps: AppDeps, id: string): number | null {
  return deps.db.$client.query<{ t: number }, [string]>('SELECT started_at AS t FROM inventory_refreshes WHERE id = ?1').get(id)?.t ?? null
}

/** Updates a running refresh's counters (after each batch). */
export function progressRefresh(deps: AppDeps, id: string, p: { asked: number; answered: number; stored: number }) {
  deps.db.$client.query('UPDATE inventory_refreshes SET minions_asked = ?2, minions_answered = ?3, packages_stored = ?4 WHERE id = ?1').run(id, p.asked, p.answered, p.stored)
}

/** Marks a refresh finished, with its error text if it failed. */
export function finishRefresh(deps: AppDeps, id: string, error: string | null = null) {
  deps.db.$client.query('UPDATE inventory_refreshes SET finished_at = ?2, error = ?3 WHERE id = ?1').run(id, deps.clock.now(), error)
}

/** The error an abandoned refresh is closed with: the process that ran it ended before it finished. */
export const ABANDONED_REFRESH = 'Saltdeck stopped before the refresh finished'

/**
 * Closes as failed every refresh still open when the service starts: only a running service refreshes, so an open row
 * is one a crash (kill -9, power loss) left behind, and it would answer "already running" for good. Returns how many.
 */
export function closeAbandonedRefreshes(deps: AppDeps): number {
  return deps.db.$client.query('UPDATE inventory_refreshes SET finished_at = ?1, error = ?2 WHERE finished_at IS NULL').run(deps.clock.now(), ABANDONED_REFRESH).changes
}

/** Whether no refresh runs and the last one failed because salt-api did not answer (it is worth running again once it does). */
export function lastRefreshLostSalt(deps: AppDeps): boolean {
  const s = refreshStatus(deps)
  return !s.running && s.last?.error === new SaltUnavailable('').detail
}

/** The running refresh (if any) and the last finished one. */
export function refreshStatus(deps: AppDeps) {
  const db = deps.db.$client
  const current = db.query<RefreshRow, []>('SELECT * FROM inventory_refreshes WHERE finished_at IS NULL ORDER BY started_at DESC, rowid DESC LIMIT 1').get()
  const last = db.query<RefreshRow, []>('SELECT * FROM inventory_refreshes WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, rowid DESC LIMIT 1').get()
  return { running: !!current, current: refreshOut(current), last: refreshOut(last) }
}
