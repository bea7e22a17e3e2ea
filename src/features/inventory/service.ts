/**
 * Package inventory. Each minion's package set is replaced atomically as a diff against what is stored,
 * and the per-name and per-version aggregates are adjusted in the same transaction, so the list endpoint
 * reads aggregates and never groups the raw rows.
 */
import type { AppDeps } from '../../deps'
import { containsPattern } from '../../lib/sql'
import { iso, isoOrNull } from '../../lib/clock'
import { ensureMinion } from '../minions/service'

/** One installed package version. */
export interface Pkg {
  name: string
  version: string
  arch?: string
}

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

const SEP = '\u0000'
const ALL = ''

/** Replaces the package sets of several minions in one transaction; returns the number of rows stored. */
export function replacePackageSets(deps: AppDeps, sets: PackageSet[], collectedAt = deps.clock.now()): number {
  const db = deps.db.$client
  const q = {
    old: db.prepare<{ name: string; version: string; arch: string; source: string }, [string]>('SELECT name, version, arch, source FROM minion_packages WHERE minion_id = ?1'),
    del: db.prepare('DELETE FROM minion_packages WHERE minion_id = ?1 AND name = ?2 AND version = ?3 AND arch = ?4'),
    ins: db.prepare('INSERT INTO minion_packages (minion_id, name, version, arch, source) VALUES (?1, ?2, ?3, ?4, ?5)'),
    verAdd: db.prepare(`INSERT INTO package_versions (source, name, version, arch, minion_count) VALUES (?1, ?2, ?3, ?4, ?5)
      ON CONFLICT (source, name, version, arch) DO UPDATE SET minion_count = minion_count + excluded.minion_count`),
    verDrop: db.prepare('DELETE FROM package_versions WHERE source = ?1 AND name = ?2 AND version = ?3 AND arch = ?4 AND minion_count <= 0'),
    nameAdd: db.prepare(`INSERT INTO package_stats (source, name, minion_count, version_count, last_seen) VALUES (?1, ?2, ?3, 0, ?4)
      ON CONFLICT (source, name) DO UPDATE SET minion_count = minion_count + excluded.minion_count`),
    nameDrop: db.prepare('DELETE FROM package_stats WHERE source = ?1 AND name = ?2 AND minion_count <= 0'),
    versions: db.prepare(`UPDATE package_stats SET version_count = (SELECT count(DISTINCT version) FROM package_versions v WHERE v.source = ?1 AND v.name = ?2)
      WHERE source = ?1 AND name = ?2`),
    lastTime: db.prepare<{ t: number | null }, [string]>('SELECT inventory_collected_at AS t FROM minions WHERE id = ?1'),
    seenAdd: db.prepare(`INSERT INTO package_seen (source, name, seen_at, n) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT (source, name, seen_at) DO UPDATE SET n = n + excluded.n`),
    seenDrop: db.prepare('DELETE FROM package_seen WHERE source = ?1 AND name = ?2 AND seen_at = ?3 AND n <= 0'),
    seen: db.prepare(`UPDATE package_stats SET last_seen = (SELECT max(seen_at) FROM package_seen s WHERE s.source = ?1 AND s.name = ?2)
      WHERE source = ?1 AND name = ?2`),
    seenAll: db.prepare(`UPDATE package_stats SET last_seen = (SELECT max(last_seen) FROM package_stats s WHERE s.name = ?1 AND s.source <> '')
      WHERE source = '' AND name = ?1`),
    minion: db.prepare('UPDATE minions SET inventory_collected_at = ?2 WHERE id = ?1'),
  }
  let stored = 0
  db.transaction(() => {
    // Deltas summed over the whole batch, applied once per key.
    const verDelta = new Map<string, number>()
    const nameDelta = new Map<string, number>()
    const seenDelta = new Map<string, number>()
    const bump = (m: Map<string, number>, k: string, d: number) => m.set(k, (m.get(k) ?? 0) + d)
    for (const set of sets) {
      ensureMinion(deps, set.minionId)
      const fresh = new Map<string, Pkg & { arch: string }>()
      for (const p of set.packages) {
        const arch = p.arch ?? ''
        fresh.set([set.source, p.name, p.version, arch].join(SEP), { name: p.name, version: p.version, arch })
      }
      const oldRows = q.old.all(set.minionId)
      const oldKeys = new Set<string>()
      const oldNames = new Set<string>()
      for (const r of oldRows) {
        const k = [r.source, r.name, r.version, r.arch].join(SEP)
        oldKeys.add(k)
        oldNames.add(r.source + SEP + r.name)
        if (fresh.has(k)) continue
        q.del.run(set.minionId, r.name, r.version, r.arch)
        bump(verDelta, k, -1)
      }
      const newNames = new Set<string>()
      for (const [k, p] of fresh) {
        newNames.add(set.source + SEP + p.name)
        if (oldKeys.has(k)) continue
        q.ins.run(set.minionId, p.name, p.version, p.arch, set.source)
        bump(verDelta, k, +1)
      }
      for (const n of oldNames) if (!newNames.has(n)) bump(nameDelta, n, -1)
      for (const n of newNames) if (!oldNames.has(n)) bump(nameDelta, n, +1)
      // Each held name moves from the minion's previous collection time to this one.
      const before = q.lastTime.get(set.minionId)?.t
      if (before != null && before !== collectedAt) for (const n of oldNames) bump(seenDelta, n + SEP + before, -1)
      for (const n of newNames) if (before !== collectedAt || !oldNames.has(n)) bump(seenDelta, n + SEP + collectedAt, +1)
      if (before === collectedAt) for (const n of oldNames) if (!newNames.has(n)) bump(seenDelta, n + SEP + before, -1)
      q.minion.run(set.minionId, collectedAt)
      stored += fresh.size
    }
    const touched = new Set<string>()
    for (const [k, d] of verDelta) {
      if (!d) continue
      const [source, name, version, arch] = k.split(SEP) as [string, string, string, string]
      for (const s of [source, ALL]) {
        q.verAdd.run(s, name, version, arch, d)
        if (d < 0) q.verDrop.run(s, name, version, arch)
        touched.add(s + SEP + name)
      }
    }
    for (const [k, d] of nameDelta) {
      if (!d) continue
      const [source, name] = k.split(SEP) as [string, string]
      for (const s of [source, ALL]) {
        q.nameAdd.run(s, name, d, collectedAt)
        if (d < 0) q.nameDrop.run(s, name)
      }
    }
    for (const k of touched) {
      const [s, name] = k.split(SEP) as [string, string]
      q.versions.run(s, name)
    }
    // last_seen: the latest collection time that still has holders, per source and then over all sources.
    const seenNames = new Set<string>()
    for (const [k, d] of seenDelta) {
      const [source, name, at] = k.split(SEP) as [string, string, string]
      seenNames.add(source + SEP + name)
      if (!d) continue
      q.seenAdd.run(source, name, Number(at), d)
      if (d < 0) q.seenDrop.run(source, name, Number(at))
    }
    const allNames = new Set<string>()
    for (const k of seenNames) {
      const [source, name] = k.split(SEP) as [string, string]
      q.seen.run(source, name)
      allNames.add(name)
    }
    for (const name of allNames) q.seenAll.run(name)
  })()
  return stored
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
  const total = db.query<{ n: number }, any[]>(`SELECT count(*) AS n FROM package_stats ${where}`).get(...args)!.n
  const orderBy = sort === 'name' ? `name ${order}` : `${sort} ${order}, name ASC`
  const rows = db.query<{ name: string; minion_count: number; version_count: number; last_seen: number }, any[]>(
    `SELECT name, minion_count, version_count, last_seen FROM package_stats ${where} ORDER BY ${orderBy} LIMIT ${p.limit} OFFSET ${p.offset}`,
  ).all(...args)
  return { total, items: rows.map((r) => ({ ...r, last_seen: iso(r.last_seen) })) }
}

/** The versions of one package name, most common first; null when no minion has it. */
export function packageVersions(deps: AppDeps, name: string, source?: string) {
  const rows = deps.db.$client.query<{ version: string; arch: string; source: string; minion_count: number }, any[]>(
    `SELECT version, arch, source, minion_count FROM package_versions WHERE name = ?1 AND ${source ? 'source = ?2' : "source <> ''"}
     ORDER BY minion_count DESC, version, arch, source`,
  ).all(...(source ? [name, source] : [name]))
  if (!rows.length) return null
  return { name, total: rows.length, versions: rows }
}

/** One minion's package rows by name, with a name filter and paging. */
export function minionPackages(deps: AppDeps, minionId: string, p: { q?: string; limit: number; offset: number }) {
  const args: string[] = [minionId]
  let where = 'WHERE minion_id = ?1'
  if (p.q) {
    args.push(containsPattern(p.q))
    where += ` AND name LIKE ?2 ESCAPE '\\'`
  }
  const db = deps.db.$client
  const total = db.query<{ n: number }, any[]>(`SELECT count(*) AS n FROM minion_packages ${where}`).get(...args)!.n
  const packages = db.query<Record<string, string>, any[]>(`SELECT name, version, arch, source FROM minion_packages ${where} ORDER BY name, version, arch LIMIT ${p.limit} OFFSET ${p.offset}`).all(...args)
  const m = db.query<{ t: number | null }, [string]>('SELECT inventory_collected_at AS t FROM minions WHERE id = ?1').get(minionId)
  return { minion_id: minionId, collected_at: isoOrNull(m?.t), total, packages }
}

type RefreshRow = { id: string; started_at: number; finished_at: number | null; target: string; minions_asked: number; minions_answered: number; packages_stored: number; error: string | null }
const refreshOut = (r: RefreshRow | null) =>
  r && {
    refresh_id: r.id, started_at: iso(r.started_at), finished_at: isoOrNull(r.finished_at), target: r.target, minions_asked: r.minions_asked,
    minions_answered: r.minions_answered, packages_stored: r.packages_stored, error: r.error,
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

/** Updates a running refresh's counters (after each batch). */
export function progressRefresh(deps: AppDeps, id: string, p: { asked: number; answered: number; stored: number }) {
  deps.db.$client.query('UPDATE inventory_refreshes SET minions_asked = ?2, minions_answered = ?3, packages_stored = ?4 WHERE id = ?1').run(id, p.asked, p.answered, p.stored)
}

/** Marks a refresh finished, with its error text if it failed. */
export function finishRefresh(deps: AppDeps, id: string, error: string | null = null) {
  deps.db.$client.query('UPDATE inventory_refreshes SET finished_at = ?2, error = ?3 WHERE id = ?1').run(id, deps.clock.now(), error)
}

/** The running refresh (if any) and the last finished one. */
export function refreshStatus(deps: AppDeps) {
  const db = deps.db.$client
  const current = db.query<RefreshRow, []>('SELECT * FROM inventory_refreshes WHERE finished_at IS NULL ORDER BY started_at DESC, rowid DESC LIMIT 1').get()
  const last = db.query<RefreshRow, []>('SELECT * FROM inventory_refreshes WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, rowid DESC LIMIT 1').get()
  return { running: !!current, current: refreshOut(current), last: refreshOut(last) }
}
