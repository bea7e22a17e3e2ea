/** Vulnerability reads (contract §12): the fleet list, one record with its minions, one minion's findings, the feeds. */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { NotFound } from '../../lib/errors'
import { containsPattern } from '../../lib/sql'
import { iso } from '../../lib/clock'
import { decodeKeyIds, emptyBits, minionOrder, orHolders, pageRows, setBit, type MinionBits } from '../inventory/holders'
import { RANK_SEVERITY, SEVERITY_RANK, stampOf } from './findings'

/** Severities a record can have. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none', 'unknown'] as const

type RecordRow = { id: string; aliases: string; summary: string; severity: string; packages: string; minion_count: number; fixed_versions: string }
const recordOut = (r: RecordRow) => ({
  id: r.id, aliases: JSON.parse(r.aliases) as string[], summary: r.summary, severity: r.severity, packages: JSON.parse(r.packages) as string[],
  minion_count: r.minion_count, fixed_versions: JSON.parse(r.fixed_versions) as string[],
})

/** The orders of the fleet list: worst first (the default), most minions first, or by record id. */
export const VULN_SORTS = ['severity', 'minions', 'id'] as const

/** A record's severity rank in SQL, from SEVERITY_RANK (unknown lowest). */
const RANK_SQL = `CASE severity ${Object.entries(SEVERITY_RANK).map(([s, r]) => `WHEN '${s}' THEN ${r}`).join(' ')} ELSE 0 END`
const ORDER: Record<(typeof VULN_SORTS)[number], string> = {
  // Worst first, then most minions: a "low" record on many minions no longer sits above two "critical" ones.
  severity: `${RANK_SQL} DESC, minion_count DESC, id DESC`,
  minions: `minion_count DESC, ${RANK_SQL} DESC, id DESC`,
  id: 'id ASC',
}

/** The fleet's records, worst first unless another order is asked; records no minion is affected by are left out unless asked for. */
export function listVulns(deps: AppDeps, p: { q?: string; severity?: string; package?: string; include_unaffected?: boolean; sort?: (typeof VULN_SORTS)[number]; limit: number; offset: number }) {
  const where: string[] = []
  const args: SQLQueryBindings[] = []
  const arg = (v: SQLQueryBindings) => (args.push(v), `?${args.length}`)
  if (!p.include_unaffected) where.push('minion_count > 0')
  if (p.severity) where.push(`severity = ${arg(p.severity)}`)
  if (p.q) {
    const q = arg(containsPattern(p.q))
    where.push(`(id LIKE ${q} ESCAPE '\\' OR aliases LIKE ${q} ESCAPE '\\' OR summary LIKE ${q} ESCAPE '\\')`)
  }
  if (p.package) {
    // A binary package name reaches the records of its source package too (libssl3 → openssl).
    const pk = arg(p.package)
    where.push(`id IN (SELECT vuln_id FROM vuln_affected WHERE package = ${pk} OR package IN (SELECT source_name FROM package_keys WHERE name = ${pk} AND source_name IS NOT NULL))`)
  }
  const w = where.length ? `WHERE ${where.join(' AND ')}` : ''
  const db = deps.db.$client
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM vuln_records ${w}`).get(...args)!.n
  const rows = db.query<RecordRow, SQLQueryBindings[]>(
    `SELECT id, aliases, summary, severity, packages, minion_count, fixed_versions FROM vuln_records ${w} ORDER BY ${ORDER[p.sort ?? 'severity']} LIMIT ${p.limit} OFFSET ${p.offset}`,
  ).all(...args)
  return { total, vulns: rows.map(recordOut) }
}

/** The minions of each ecosystem as bitmaps, cached while the sets and the findings stay as they are. */
let ecoCache: { stamp: string; masks: Map<string, MinionBits> } | null = null

function ecoMasks(deps: AppDeps): Map<string, MinionBits> {
  const db = deps.db.$client
  // Ecosystems move with a flush (the sets' generation) or with grains (watchGrains moves the findings' generation).
  const stamp = stampOf(db)
  if (ecoCache?.stamp === stamp) return ecoCache.masks
  const masks = new Map<string, MinionBits>()
  for (const r of db.query<{ num: number; eco: string }, []>('SELECT minion_num AS num, ecosystem AS eco FROM vuln_minions WHERE ecosystem IS NOT NULL').iterate()) {
    let m = masks.get(r.eco)
    if (!m) masks.set(r.eco, (m = emptyBits(db)))
    setBit(m, r.num)
  }
  ecoCache = { stamp, masks }
  return masks
}

/** One record with its affected entries and the minions it affects (paged, by minion id). */
export function getVuln(deps: AppDeps, id: string, p: { limit: number; offset: number }) {
  const db = deps.db.$client
  const r = db.query<RecordRow & { details: string; score: number | null; published: string | null; modified: string | null }, [string]>('SELECT * FROM vuln_records WHERE id = ?1').get(id)
  if (!r) throw new NotFound('Vulnerability')
  const affected = db.query<{ ecosystem: string; package: string; ranges: string; versions: string }, [string]>(
    'SELECT ecosystem, package, ranges, versions FROM vuln_affected WHERE vuln_id = ?1 ORDER BY ecosystem, package',
  ).all(id).map((a) => ({ ecosystem: a.ecosystem, package: a.package, ranges: JSON.parse(a.ranges) as Record<string, string>[][], versions: JSON.parse(a.versions) as string[] }))
  const matches = db.query<{ ecosystem: string; key_id: number; fixed: string | null; name: string; version: string }, [string]>(
    'SELECT m.ecosystem, m.key_id, m.fixed, k.name, k.version FROM vuln_matches m JOIN package_keys k ON k.id = m.key_id WHERE m.vuln_id = ?1 ORDER BY k.name, k.version, k.arch',
  ).all(id)
  const masks = ecoMasks(deps)
  const held = matches.flatMap((m) => {
    const eco = masks.get(m.ecosystem)
    if (!eco) return []
    const bits = emptyBits(db)
    orHolders(db, m.key_id, bits)
    for (let i = 0; i < bits.length; i++) bits[i]! &= eco[i] ?? 0
    return [{ ...m, bits }]
  })
  const order = minionOrder(db)
  const page = pageRows(order, held.map((m) => m.bits), p.offset, p.limit)
  const total = page.total
  const minions = page.rows.map(([num, i]) => ({ minion_id: order.ids[num]!, package: held[i]!.name, installed: held[i]!.version, fixed: held[i]!.fixed }))
  return {
    ...recordOut(r), details: r.details, score: r.score, published: r.published, modified: r.modified, affected, minion_total: total, minions,
  }
}

type FindingRow = { id: string; aliases: string; summary: string; severity: string; package: string; installed: string; fixed: string | null; source_package: string }

/** The findings of one minion's current package set in its ecosystem, as rows per (record, package). */
function findingRows(deps: AppDeps, minionId: string): { ecosystem: string | null; rows: FindingRow[] } | null {
  const db = deps.db.$client
  const set = db.query<{ keys: Uint8Array; eco: string | null }, [string]>(
    'SELECT s.keys, v.ecosystem AS eco FROM minion_package_sets s LEFT JOIN vuln_minions v ON v.minion_num = s.rowid WHERE s.minion_id = ?1',
  ).get(minionId)
  if (!set) return null
  if (!set.eco) return { ecosystem: null, rows: [] }
  const rows = db.query<FindingRow, [string, string]>(
    `SELECT m.vuln_id AS id, r.aliases, r.summary, r.severity, k.name AS package, k.version AS installed, m.fixed, m.package AS source_package
     FROM vuln_matches m JOIN package_keys k ON k.id = m.key_id JOIN vuln_records r ON r.id = m.vuln_id
     WHERE m.ecosystem = ?1 AND m.key_id IN (SELECT value FROM json_each(?2))`,
  ).all(set.eco, JSON.stringify([...decodeKeyIds(set.keys)]))
  return { ecosystem: set.eco, rows }
}

const byRank = (a: { severity: string; id: string }, b: { severity: string; id: string }) =>
  (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** One minion's findings grouped per record, worst first. */
export function minionVulns(deps: AppDeps, minionId: string, p: { severity?: string; limit: number; offset: number }) {
  const row = deps.db.$client.query<{ grains: number }, [string]>('SELECT grains IS NOT NULL AS grains FROM minions WHERE id = ?1').get(minionId)
  if (!row) throw new NotFound('Minion')
  const found = findingRows(deps, minionId)
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
    grains_collected: row.grains === 1, packages_collected: found !== null,
    total: all.length, vulns: all.slice(p.offset, p.offset + p.limit),
  }
}

/** How many records at or above a severity rank affect a minion, and the first ids, worst first (alert evidence). */
export function minionVulnIds(deps: AppDeps, minionId: string, minRank: number, limit: number): { total: number; ids: string[] } {
  const rows = findingRows(deps, minionId)?.rows.filter((r) => (SEVERITY_RANK[r.severity] ?? 0) >= minRank) ?? []
  const ids = [...new Map(rows.map((r) => [r.id, r])).values()].sort(byRank).map((r) => r.id)
  return { total: ids.length, ids: ids.slice(0, limit) }
}

/** The imported feeds, by ecosystem. */
export function listFeeds(deps: AppDeps) {
  const rows = deps.db.$client.query<{ ecosystem: string; records: number; imported_at: number; source: string }, []>('SELECT * FROM vuln_feeds ORDER BY ecosystem').all()
  return { feeds: rows.map((r) => ({ ...r, imported_at: iso(r.imported_at) })) }
}

/** Figures for /metrics: records per feed, feed age, and minions by their worst finding. */
export function vulnStats(deps: AppDeps) {
  const db = deps.db.$client
  const feeds = db.query<{ ecosystem: string; records: number; imported_at: number }, []>('SELECT ecosystem, records, imported_at FROM vuln_feeds ORDER BY ecosystem').all()
  const worst = db.query<{ worst: number; n: number }, []>('SELECT worst, count(*) AS n FROM vuln_minions WHERE vuln_count > 0 GROUP BY worst').all()
  return { feeds, minions: worst.map((w) => ({ severity: RANK_SEVERITY[w.worst] ?? 'unknown', n: w.n })) }
}
