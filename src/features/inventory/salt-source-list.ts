/**
 * The package list of one salt source's minions (contract §15 "Several masters"): the kept aggregates (package_stats)
 * are fleet-wide, so this one is counted on request from the package sets collected through that source, with the
 * same filters, sorts, tie-break and paging as the fleet-wide list (features/inventory/service.ts listPackages).
 */
import type { AppDeps } from '../../deps'
import { iso } from '../../lib/clock'
import { allKeys } from './set-store'
import { setsThrough } from './package-store'
import { decodeKeyIds } from './holders'
import type { PACKAGE_SORTS } from './package-store'

/** One name's counts among the source's minions. */
interface NameCounts {
  name: string
  minion_count: number
  versions: Set<string>
  last_seen: number
  /** The last set (by position) counted, so a minion holding two versions of the name counts once. */
  lastSet: number
}

/** The list filtered to the minions whose sets came through `saltSource` (an unknown source: nothing). */
export async function packagesThrough(
  deps: AppDeps,
  p: { saltSource: string; q?: string; source?: string; sort?: (typeof PACKAGE_SORTS)[number]; order?: 'asc' | 'desc'; limit: number; offset: number },
) {
  const sort = p.sort ?? 'name'
  const order = p.order ?? (sort === 'name' ? 'asc' : 'desc')
  const sets = await setsThrough(deps.db, p.saltSource, p.source)
  if (!sets.length) return { total: 0, items: [] }
  const byId = new Map<number, { name: string; version: string }>()
  for (const k of await allKeys(deps.db)) byId.set(k.id, { name: k.name, version: k.version })
  const needle = p.q?.toLowerCase()
  const names = new Map<string, NameCounts>()
  sets.forEach((s, i) => {
    for (const id of decodeKeyIds(s.keys)) {
      const k = byId.get(id)
      if (!k || (needle !== undefined && !k.name.toLowerCase().includes(needle))) continue
      let row = names.get(k.name)
      if (!row) names.set(k.name, (row = { name: k.name, minion_count: 0, versions: new Set(), last_seen: 0, lastSet: -1 }))
      row.versions.add(k.version)
      if (row.lastSet !== i) {
        row.lastSet = i
        row.minion_count++
      }
      if (s.collected_at > row.last_seen) row.last_seen = s.collected_at
    }
  })
  const rows = [...names.values()].map((r) => ({ name: r.name, minion_count: r.minion_count, version_count: r.versions.size, last_seen: r.last_seen }))
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  const sign = order === 'asc' ? 1 : -1
  // Ties are broken by name ascending whatever the order (contract §8).
  rows.sort(sort === 'name' ? (a, b) => sign * byName(a, b) : (a, b) => sign * (a[sort] - b[sort]) || byName(a, b))
  return { total: rows.length, items: rows.slice(p.offset, p.offset + p.limit).map((r) => ({ ...r, last_seen: iso(r.last_seen) })) }
}
