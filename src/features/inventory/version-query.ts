/** "Who runs this package below/above a version": contract §12's version query, from the holder index, by minion id. */
import type { AppDeps } from '../../deps'
import { compareVersions } from '../../lib/version-order'
import { emptyBits, hasBit, minionOrder, orHolders } from './holders'

/** Comparison operators of the query. */
export const VERSION_OPS = ['lt', 'le', 'eq', 'ne', 'ge', 'gt'] as const
export type VersionOp = (typeof VERSION_OPS)[number]

const test: Record<VersionOp, (c: number) => boolean> = {
  lt: (c) => c < 0, le: (c) => c <= 0, eq: (c) => c === 0, ne: (c) => c !== 0, ge: (c) => c >= 0, gt: (c) => c > 0,
}

/**
 * The minions holding a package (optionally of one source, optionally only versions `op version` in that source's
 * order), one row per (minion, version, arch), ordered by minion id; null when no minion holds the name at all.
 */
export function packageMinions(deps: AppDeps, name: string, p: { source?: string; op?: VersionOp; version?: string; limit: number; offset: number }) {
  const db = deps.db.$client
  // package_versions is keyed by source first: the sources holding the name come from package_stats' name index.
  const sources = db.query<{ source: string }, [string]>("SELECT source FROM package_stats WHERE name = ?1 AND source <> ''").all(name).map((r) => r.source)
  const versions = db.query<{ version: string; arch: string }, [string, string]>('SELECT version, arch FROM package_versions WHERE source = ?1 AND name = ?2 AND minion_count > 0')
  const keyId = db.query<{ id: number }, [string, string, string]>('SELECT id FROM package_keys WHERE name = ?1 AND version = ?2 AND arch = ?3')
  const all = sources.flatMap((source) => versions.all(source, name).flatMap((v) => {
    const k = keyId.get(name, v.version, v.arch)
    return k ? [{ id: k.id, version: v.version, arch: v.arch, source }] : []
  })).sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : a.arch < b.arch ? -1 : a.arch > b.arch ? 1 : 0))
  if (!all.length) return null
  const keys = all.filter((k) => (!p.source || k.source === p.source) && (!p.op || test[p.op](compareVersions(k.source, k.version, p.version!))))
  // One key can be held under two sources (the same version string on apt and rpm minions): read its holders once.
  const bits = new Map<number, Uint32Array>()
  for (const k of keys) {
    if (bits.has(k.id)) continue
    const b = emptyBits(db)
    orHolders(db, k.id, b)
    bits.set(k.id, b)
  }
  const order = minionOrder(db)
  const minions: { minion_id: string; version: string; arch: string; source: string }[] = []
  let total = 0
  for (const num of order.nums) {
    const src = order.sources[num]!
    for (const k of keys) {
      if (k.source !== src || !hasBit(bits.get(k.id)!, num)) continue
      if (total >= p.offset && minions.length < p.limit) minions.push({ minion_id: order.ids[num]!, version: k.version, arch: k.arch, source: src })
      total++
    }
  }
  return { name, total, minions }
}
