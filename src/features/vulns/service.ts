/** Vulnerability reads (contract §12): the fleet list, one record with its minions, one minion's findings, the feeds. */
import type { AppDeps } from '../../deps'
import { NotFound } from '../../lib/errors'
import { containsPattern } from '../../lib/sql'
import { iso } from '../../lib/clock'
import { decodeKeyIds, emptyBits, minionOrder, orHolders, pageRows, setBit, type MinionBits } from '../inventory/holders'
import { RANK_SEVERITY, SEVERITY_RANK, stampOf } from './findings'
import { affectedOf, feedRows, findingsOf, matchesOf, minionEcosystems, minionGrainsCollected, minionsByWorst, recordOf, setAndEcosystem, vulnPage, VULN_SORTS, type FindingRow, type RecordRow } from './vuln-store'

/** Severities a record can have. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none', 'unknown'] as const

const recordOut = (r: RecordRow) => ({
  id: r.id, aliases: JSON.parse(r.aliases) as string[], summary: r.summary, severity: r.severity, packages: JSON.parse(r.packages) as string[],
  minion_count: r.minion_count, fixed_versions: JSON.parse(r.fixed_versions) as string[],
})

export { VULN_SORTS }

/** The fleet's records, worst first unless another order is asked; records no minion is affected by are left out unless asked for. */
export async function listVulns(deps: AppDeps, p: { q?: string; severity?: string; package?: string; include_unaffected?: boolean; sort?: (typeof VULN_SORTS)[number]; limit: number; offset: number }) {
  const { total, rows } = await vulnPage(deps.db, {
    include_unaffected: p.include_unaffected, severity: p.severity, pattern: p.q ? containsPattern(p.q) : undefined, package: p.package,
    sort: p.sort ?? 'severity', limit: p.limit, offset: p.offset,
  })
  return { total, vulns: rows.map(recordOut) }
}

/** The minions of each ecosystem as bitmaps, cached while the sets and the findings stay as they are. */
let ecoCache: { db: unknown; stamp: string; masks: Map<string, MinionBits> } | null = null

async function ecoMasks(deps: AppDeps): Promise<Map<string, MinionBits>> {
  const db = deps.db
  // Ecosystems move with a flush (the sets' generation) or with grains (watchGrains moves the findings' generation).
  const stamp = await stampOf(db)
  // Per connection too: two databases in one process (tests, a CLI beside) can stand at the same generations.
  if (ecoCache?.db === db.native.client && ecoCache.stamp === stamp) return ecoCache.masks
  const masks = new Map<string, MinionBits>()
  for (const r of await minionEcosystems(db)) {
    let m = masks.get(r.eco)
    if (!m) masks.set(r.eco, (m = await emptyBits(db)))
    setBit(m, r.num)
  }
  ecoCache = { db: db.native.client, stamp, masks }
  return masks
}

/** One record with its affected entries and the minions it affects (paged, by minion id). */
export async function getVuln(deps: AppDeps, id: string, p: { limit: number; offset: number }) {
  const db = deps.db
  const r = await recordOf(db, id)
  if (!r) throw new NotFound('Vulnerability')
  const affected = (await affectedOf(db, id)).map((a) => ({ ecosystem: a.ecosystem, package: a.package, ranges: JSON.parse(a.ranges) as Record<string, string>[][], versions: JSON.parse(a.versions) as string[] }))
  const matches = await matchesOf(db, id)
  const masks = await ecoMasks(deps)
  const held: ((typeof matches)[number] & { bits: MinionBits })[] = []
  for (const m of matches) {
    const eco = masks.get(m.ecosystem)
    if (!eco) continue
    const bits = await emptyBits(db)
    await orHolders(db, m.key_id, bits)
    for (let i = 0; i < bits.length; i++) bits[i]! &= eco[i] ?? 0
    held.push({ ...m, bits })
  }
  const order = await minionOrder(db)
  const page = pageRows(order, held.map((m) => m.bits), p.offset, p.limit)
  const total = page.total
  const minions = page.rows.map(([num, i]) => ({ minion_id: order.ids[num]!, package: held[i]!.name, installed: held[i]!.version, fixed: held[i]!.fixed }))
  return {
    ...recordOut(r), details: r.details, score: r.score, published: r.published, modified: r.modified, affected, minion_total: total, minions,
  }
}

/** The findings of one minion's current package set in its ecosystem, as rows per (record, package). */
async function findingRows(deps: AppDeps, minionId: string): Promise<{ ecosystem: string | null; rows: FindingRow[] } | null> {
  const set = await setAndEcosystem(deps.db, minionId)
  if (!set) return null
  if (!set.eco) return { ecosystem: null, rows: [] }
  const rows = await findingsOf(deps.db, set.eco, JSON.stringify([...decodeKeyIds(set.keys)]))
  return { ecosystem: set.eco, rows }
}

const byRank = (a: { severity: string; id: string }, b: { severity: string; id: string }) =>
  (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** One minion's findings grouped per record, worst first. */
export async function minionVulns(deps: AppDeps, minionId: string, p: { severity?: string; limit: number; offset: number }) {
  const grains = await minionGrainsCollected(deps.db, minionId)
  if (grains === undefined) throw new NotFound('Minion')
  const found = await findingRows(deps, minionId)
  const byId = new Map<string, { id: string; aliases: string[]; summary: string; severity: string; packages: { package: string; installed: string; fixed: string | null }[] }>()
  for (const r of found?.rows ?? []) {
    if (p.severity && r.severity !== p.severity) continue
    let v = byId.get(r.id)
    if (!v) byId.set(r.id, (v = { id: r.id, aliases: JSON.parse(r.aliases) as string[], summary: r.summary, severity: r.severity, packages: [] }))
    v.packages.push({ package: r.package, installed: r.installed, fixed: r.fixed })
  }
  const all = [...byId.values()].sort(byRank)
  for (const v of all) v.packages.sort((a, b) => (a.package < b.package ? -1 : a.package > b.package ? 1 : 0))
  return {
    minion_id: minionId, ecosystem: found?.ecosystem ?? null,
    // No ecosystem because nothing was read yet (a new minion) is not "no ecosystem": the page says which.
    grains_collected: grains, packages_collected: found !== null,
    total: all.length, vulns: all.slice(p.offset, p.offset + p.limit),
  }
}

/** How many records at or above a severity rank affect a minion, and the first ids, worst first (alert evidence). */
export async function minionVulnIds(deps: AppDeps, minionId: string, minRank: number, limit: number): Promise<{ total: number; ids: string[] }> {
  const rows = (await findingRows(deps, minionId))?.rows.filter((r) => (SEVERITY_RANK[r.severity] ?? 0) >= minRank) ?? []
  const ids = [...new Map(rows.map((r) => [r.id, r])).values()].sort(byRank).map((r) => r.id)
  return { total: ids.length, ids: ids.slice(0, limit) }
}

/** The imported feeds, by ecosystem. */
export async function listFeeds(deps: AppDeps) {
  const rows = await feedRows(deps.db)
  return { feeds: rows.map((r) => ({ ...r, imported_at: iso(r.imported_at) })) }
}

/** Figures for /metrics: records per feed, feed age, and minions by their worst finding. */
export async function vulnStats(deps: AppDeps) {
  const feeds = await feedRows(deps.db)
  const worst = await minionsByWorst(deps.db)
  return { feeds, minions: worst.map((w) => ({ severity: RANK_SEVERITY[w.worst] ?? 'unknown', n: w.n })) }
}
