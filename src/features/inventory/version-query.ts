/** "Who runs this package below/above a version": contract §12's version query, from the holder index, by minion id. */
import type { AppDeps } from '../../deps'
import { compareVersions } from '../../lib/version-order'
import { emptyBits, minionOrder, orHolders, pageRows } from './holders'

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
  // A row is a minion holding the key under the key's source: each key's holders masked by that source's minions.
  const order = minionOrder(db)
  const sets = keys.map((k) => {
    const b = emptyBits(db)
    orHolders(db, k.id, b)
    const mask = order.bySource.get(k.source)
    for (let i = 0; i < b.length; i++) b[i]! &= mask?.[i] ?? 0
    return b
  })
  const page = pageRows(order, sets, p.offset, p.limit)
  const total = page.total
  const minions = page.rows.map(([num, si]) => ({ minion_id: order.ids[num]!, version: keys[si]!.version, arch: keys[si]!.arch, source: keys[si]!.source }))
  return { name, total, minions }
}
