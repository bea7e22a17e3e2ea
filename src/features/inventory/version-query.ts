/** "Who runs this package below/above a version": contract §12's version query, from the holder index, by minion id. */
import type { AppDeps } from '../../deps'
import { compareVersions, versionProblem } from '../../lib/version-order'
import { invalid } from '../../lib/errors'
import { emptyBits, minionOrder, orHolders, pageRows } from './holders'

/** Comparison operators of the query. */
export const VERSION_OPS = ['lt', 'le', 'eq', 'ne', 'ge', 'gt'] as const
export type VersionOp = (typeof VERSION_OPS)[number]

const test: Record<VersionOp, (c: number) => boolean> = {
  lt: (c) => c < 0, le: (c) => c <= 0, eq: (c) => c === 0, ne: (c) => c !== 0, ge: (c) => c >= 0, gt: (c) => c > 0,
}

/** The held packages built from source package `name` under another name (openssl → libssl3), by name. */
export function binariesOf(deps: AppDeps, name: string): string[] {
  return deps.db.$client.query<{ name: string }, [string]>(
    'SELECT DISTINCT name FROM package_keys WHERE source_name = ?1 AND name <> ?1 ORDER BY name',
  ).all(name).map((r) => r.name)
}

/**
 * The minions holding a package (optionally of one source, optionally only versions `op version` in that source's
 * order; with `binaries`, also the packages built from it as a source package, as vulnerability records name them),
 * one row per (minion, package, version, arch), ordered by minion id; null when no minion holds the name at all.
 * A version the package system would not take (`not a version!!`) is a 422, not an answer.
 */
export function packageMinions(deps: AppDeps, name: string, p: { source?: string; op?: VersionOp; version?: string; binaries?: boolean; limit: number; offset: number }) {
  const db = deps.db.$client
  const binaries = binariesOf(deps, name)
  const names = p.binaries ? [name, ...binaries] : [name]
  // package_versions is keyed by source first: the sources holding the name come from package_stats' name index.
  const sourcesOf = db.query<{ source: string }, [string]>("SELECT source FROM package_stats WHERE name = ?1 AND source <> ''")
  const versions = db.query<{ version: string; arch: string }, [string, string]>('SELECT version, arch FROM package_versions WHERE source = ?1 AND name = ?2 AND minion_count > 0')
  const keyId = db.query<{ id: number }, [string, string, string]>('SELECT id FROM package_keys WHERE name = ?1 AND version = ?2 AND arch = ?3')
  const all = names.flatMap((pkg) => sourcesOf.all(pkg).map((r) => r.source).flatMap((source) => versions.all(source, pkg).flatMap((v) => {
    const k = keyId.get(pkg, v.version, v.arch)
    return k ? [{ id: k.id, package: pkg, version: v.version, arch: v.arch, source }] : []
  }))).sort((a, b) => (a.package < b.package ? -1 : a.package > b.package ? 1 : a.version < b.version ? -1 : a.version > b.version ? 1 : a.arch < b.arch ? -1 : a.arch > b.arch ? 1 : 0))
  if (!all.length) return null
  if (p.version !== undefined) {
    // The version is checked against each package system it would be compared in.
    for (const source of new Set(all.filter((k) => !p.source || k.source === p.source).map((k) => k.source))) {
      const problem = versionProblem(source, p.version)
      if (problem) throw invalid(['version'], `${problem} (package source ${source})`, p.version)
    }
  }
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
  const minions = page.rows.map(([num, si]) => ({ minion_id: order.ids[num]!, package: keys[si]!.package, version: keys[si]!.version, arch: keys[si]!.arch, source: keys[si]!.source }))
  return { name, binaries, total, minions }
}
