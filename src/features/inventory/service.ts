/**
 * Package inventory. Each minion's package set is one row, replaced atomically by PackageSetWriter, which adjusts the
 * per-name and per-version aggregates in the same transaction, so the list endpoint reads aggregates and never groups
 * the raw sets.
 */
import type { AppDeps } from '../../deps'
import type { Engine, Queryable } from '../../db/engine'
import { containsPattern } from '../../lib/sql'
import { iso, isoOrNull } from '../../lib/clock'
import { PackageSetWriter, type Pkg } from './writer'
import { decodeKeyIds } from './holders'
import { SaltUnavailable } from '../../salt/errors'
import { closeOpenRefreshes, insertRefreshUnlessRunning, latestRefreshes, refreshStart, setRefreshCounters, setRefreshFinished, type RefreshRow } from './refresh-store'
import { collectedSince, countPackageNames, currentGeneration, keysPage, PACKAGE_SORTS, packageNamePage, packageSetOf, versionRows } from './package-store'

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
export async function replacePackageSets(deps: AppDeps, sets: PackageSet[], collectedAt = deps.clock.now()): Promise<number> {
  const w = await PackageSetWriter.open(deps)
  for (const s of sets) w.addPackages(s.minionId, s.source, s.packages)
  return w.flush(collectedAt)
}

export { PACKAGE_SORTS }
type Sort = (typeof PACKAGE_SORTS)[number]

/** The fleet-wide package list: one row per name from the aggregates, filtered, sorted and paged. */
export async function listPackages(deps: AppDeps, p: { q?: string; source?: string; sort?: Sort; order?: 'asc' | 'desc'; limit: number; offset: number }) {
  const sort = p.sort ?? 'name'
  const order = p.order ?? (sort === 'name' ? 'asc' : 'desc')
  const source = p.source ?? ALL
  const pattern = p.q ? containsPattern(p.q) : undefined
  const db = deps.db
  const total = await keptCount(db, `${source}\0${pattern ?? ''}`, () => countPackageNames(db, source, pattern))
  const rows = await packageNamePage(db, { source, pattern, sort, order, limit: p.limit, offset: p.offset })
  return { total, items: rows.map((r) => ({ ...r, last_seen: iso(r.last_seen) })) }
}

/** Totals of the package list per (source, name filter), valid while the inventory generation stays (LRU-bounded). */
const keptCounts = new WeakMap<object, { generation: number; totals: Map<string, number> }>()
const MAX_KEPT = 256

/**
 * A package-list total counted once per inventory generation: package_stats changes only in a writer's flush, which
 * moves the generation (in the database, so a change made by another process is seen too).
 */
async function keptCount(db: Engine, key: string, count: () => Promise<number>): Promise<number> {
  const generation = await currentGeneration(db)
  let kept = keptCounts.get(db)
  if (!kept || kept.generation !== generation) keptCounts.set(db, (kept = { generation, totals: new Map() }))
  let n = kept.totals.get(key)
  if (n === undefined) {
    n = await count()
    if (kept.totals.size >= MAX_KEPT) kept.totals.delete(kept.totals.keys().next().value!)
    kept.totals.set(key, n)
  }
  return n
}

/** The versions of one package name, most common first; null when no minion has it. */
export async function packageVersions(deps: AppDeps, name: string, source?: string) {
  const rows = await versionRows(deps.db, name, source)
  if (!rows.length) return null
  return { name, total: rows.length, versions: rows }
}

/** One minion's package rows by name, with a name filter and paging. */
export async function minionPackages(deps: AppDeps, minionId: string, p: { q?: string; limit: number; offset: number }) {
  const set = await packageSetOf(deps.db, minionId)
  if (!set) return { minion_id: minionId, collected_at: null, salt_source: null, total: 0, packages: [] }
  // The set's ids go to the database as one JSON array, so filter, order and paging stay in SQL.
  const ids = JSON.stringify(Array.from(decodeKeyIds(set.keys)))
  const { total, rows } = await keysPage(deps.db, ids, { pattern: p.q ? containsPattern(p.q) : undefined, limit: p.limit, offset: p.offset })
  return { minion_id: minionId, collected_at: iso(set.collected_at), salt_source: set.salt_source, total, packages: rows.map((r) => ({ ...r, source: set.source })) }
}

const refreshOut = (r: RefreshRow | undefined) =>
  (r && {
    refresh_id: r.id, started_at: iso(r.started_at), finished_at: isoOrNull(r.finished_at), target: r.target, minions_asked: r.minions_asked,
    minions_answered: r.minions_answered, packages_stored: r.packages_stored, error: r.error,
  }) ?? null

/** Which of these minions have a package set collected at or after `since` (epoch ms). */
export async function packagesCollectedSince(deps: AppDeps, ids: string[], since: number): Promise<Set<string>> {
  const out = new Set<string>()
  for (const id of ids) if (await collectedSince(deps.db, id, since)) out.add(id)
  return out
}

/** Records the start of a refresh; null when one is already running. */
export async function startRefresh(deps: AppDeps, target: string): Promise<{ refresh_id: string; started_at: string } | null> {
  const id = crypto.randomUUID()
  const now = deps.clock.now()
  const started = await deps.db.tx((tx) => insertRefreshUnlessRunning(tx, id, now, target))
  return started ? { refresh_id: id, started_at: iso(now) } : null
}

/** When a refresh started (epoch ms); null for an unknown id. */
export function refreshStartedAt(deps: AppDeps, id: string): Promise<number | null> {
  return refreshStart(deps.db, id)
}

/** Updates a running refresh's counters (after each batch). */
export async function progressRefresh(deps: AppDeps, id: string, p: { asked: number; answered: number; stored: number }) {
  await setRefreshCounters(deps.db, id, p)
}

/** Marks a refresh finished, with its error text if it failed. */
export async function finishRefresh(deps: AppDeps, id: string, error: string | null = null) {
  await setRefreshFinished(deps.db, id, deps.clock.now(), error)
}

/** The error an abandoned refresh is closed with: the process that ran it ended before it finished. */
export const ABANDONED_REFRESH = 'Saltdeck stopped before the refresh finished'

/**
 * Closes as failed every refresh still open when the service starts: only a running service refreshes, so an open row
 * is one a crash (kill -9, power loss) left behind, and it would answer "already running" for good. Returns how many.
 */
export function closeAbandonedRefreshes(deps: AppDeps): Promise<number> {
  return closeOpenRefreshes(deps.db, deps.clock.now(), ABANDONED_REFRESH)
}

/** Whether no refresh runs and the last one failed because salt-api did not answer (it is worth running again once it does). */
export async function lastRefreshLostSalt(deps: AppDeps): Promise<boolean> {
  const s = await refreshStatus(deps)
  return !s.running && s.last?.error === new SaltUnavailable('').detail
}

/** The running refresh (if any) and the last finished one. */
export async function refreshStatus(deps: AppDeps) {
  const { current, last } = await latestRefreshes(deps.db)
  return { running: !!current, current: refreshOut(current), last: refreshOut(last) }
}
