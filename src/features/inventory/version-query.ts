/** "Who runs this package below/above a version": contract §12's version query, from the holder index, by minion id. */
import type { AppDeps } from '../../deps'
import { compareVersions, versionProblem } from '../../lib/version-order'
import { invalid } from '../../lib/errors'
import { emptyBits, minionOrder, orHolders, pageRows } from './holders'
import { binaryNames, heldVersions, keyIdOf, sourcesOfName } from './package-store'
import { untilCommitBy } from '../../db/until-commit'

/** Comparison operators of the query. */
export const VERSION_OPS = ['lt', 'le', 'eq', 'ne', 'ge', 'gt'] as const
export type VersionOp = (typeof VERSION_OPS)[number]

const test: Record<VersionOp, (c: number) => boolean> = {
  lt: (c) => c < 0, le: (c) => c <= 0, eq: (c) => c === 0, ne: (c) => c !== 0, ge: (c) => c >= 0, gt: (c) => c > 0,
}

/** The held packages built from source package `name` under another name (openssl → libssl3), by name. */
export function binariesOf(deps: AppDeps, name: string): Promise<string[]> {
  return keptBinaries(deps.db, name)
}

/** binaryNames kept until the next commit: a page of findings or a repeated query asks for the same names. */
const keptBinaries = untilCommitBy(binaryNames)

/** A key some minion holds: its id, package name, version, arch and package source. */
interface HeldKey { id: number; package: string; version: string; arch: string; source: string }

/** Every key of a package name that some minion holds, in any source; kept until the next commit. */
const heldKeys = untilCommitBy(async (db, pkg: string): Promise<HeldKey[]> => {
  // package_versions is keyed by source first: the sources holding the name come from package_stats' name index.
  const found: HeldKey[] = []
  for (const source of await sourcesOfName(db, pkg))
    for (const v of await heldVersions(db, source, pkg)) {
      const id = await keyIdOf(db, pkg, v.version, v.arch)
      if (id !== undefined) found.push({ id, package: pkg, version: v.version, arch: v.arch, source })
    }
  return found
})

/**
 * The minions holding a package (optionally of one source, optionally only versions `op version` in that source's
 * order; with `binaries`, also the packages built from it as a source package, as vulnerability records name them),
 * one row per (minion, package, version, arch), ordered by minion id; null when no minion holds the name at all.
 * A version the package system would not take (`not a version!!`) is a 422, not an answer.
 */
export async function packageMinions(
  deps: AppDeps, name: string, p: { source?: string; salt_source?: string; op?: VersionOp; version?: string; binaries?: boolean; limit: number; offset: number },
) {
  const db = deps.db
  const binaries = await binariesOf(deps, name)
  const names = p.binaries ? [name, ...binaries] : [name]
  const found: HeldKey[] = []
  for (const pkg of names) found.push(...(await heldKeys(db, pkg)))
  const all = found.sort((a, b) => (a.package < b.package ? -1 : a.package > b.package ? 1 : a.version < b.version ? -1 : a.version > b.version ? 1 : a.arch < b.arch ? -1 : a.arch > b.arch ? 1 : 0))
  if (!all.length) return null
  if (p.version !== undefined) {
    // The version is checked against each package system it would be compared in.
    for (const source of new Set(all.filter((k) => !p.source || k.source === p.source).map((k) => k.source))) {
      const problem = versionProblem(source, p.version)
      if (problem) throw invalid(['version'], `${problem} (package source ${source})`, p.version)
    }
  }
  const keys = all.filter((k) => (!p.source || k.source === p.source) && (!p.op || test[p.op](compareVersions(k.source, k.version, p.version!))))
  // A row is a minion holding the key under the key's source: each key's holders masked by that source's minions (and
  // by the salt source's, when one is asked for: an unknown one matches nothing).
  const order = await minionOrder(db)
  const through = p.salt_source === undefined ? null : order.bySaltSource.get(p.salt_source)
  const sets = []
  // One width for every key's bitmap: the minion numbers stored now.
  const width = (await emptyBits(db)).length
  for (const k of keys) {
    const b = new Uint32Array(width)
    await orHolders(db, k.id, b)
    const mask = order.bySource.get(k.source)
    for (let i = 0; i < b.length; i++) b[i]! &= mask?.[i] ?? 0
    if (through !== null) for (let i = 0; i < b.length; i++) b[i]! &= through?.[i] ?? 0
    sets.push(b)
  }
  const page = pageRows(order, sets, p.offset, p.limit)
  const total = page.total
  const minions = page.rows.map(([num, si]) => ({
    minion_id: order.ids[num]!, package: keys[si]!.package, version: keys[si]!.version, arch: keys[si]!.arch, source: keys[si]!.source, salt_source: order.saltSources[num]!,
  }))
  return { name, binaries, total, minions }
}
