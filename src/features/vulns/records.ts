/** OSV records as Saltdeck keeps them: the fields it shows, and the affected entries of the ecosystems it matches. */
import { feedEcosystem, versionOrder } from './ecosystem'
import { recordSeverity } from './cvss'
import { sortEvents, type RangeEvent } from './ranges'
import { FeedError } from './osv-read'

/** One affected (ecosystem, package) of a record, its ECOSYSTEM ranges sorted in the ecosystem's version order. */
export interface AffectedEntry {
  ecosystem: string
  package: string
  ranges: RangeEvent[][]
  versions: string[]
}

/** A record ready to store. */
export interface FeedRecord {
  id: string
  aliases: string[]
  summary: string
  details: string
  severity: string
  score: number | null
  published: string | null
  modified: string | null
  affected: AffectedEntry[]
}

/** What became of one record read from a feed. */
export type Read = { record: FeedRecord } | { skipped: 'withdrawn' | 'ecosystem' }

const str = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : '')
const strs = (v: unknown, max: number) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length > 0 && x.length <= max) : [])

/** Reads one OSV record; a record without a usable `id` makes the whole feed broken (FeedError naming where it is). */
export function readRecord(from: string, v: unknown): Read {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new FeedError(`${from}: a record is not a JSON object`)
  const r = v as Record<string, unknown>
  if (typeof r.id !== 'string' || !r.id || r.id.length > 200) throw new FeedError(`${from}: a record has no valid "id"`)
  if (r.affected !== undefined && !Array.isArray(r.affected)) throw new FeedError(`${from}: record ${r.id}: "affected" is not a list`)
  if (r.withdrawn !== undefined && r.withdrawn !== null) return { skipped: 'withdrawn' }
  const affected: AffectedEntry[] = []
  for (const a of (r.affected ?? []) as unknown[]) {
    if (!a || typeof a !== 'object') continue
    const pkg = (a as { package?: { ecosystem?: unknown; name?: unknown } }).package
    const ecosystem = feedEcosystem(pkg?.ecosystem)
    const name = str(pkg?.name, 512)
    if (!ecosystem || !name) continue
    const cmp = versionOrder(ecosystem)
    const ranges: RangeEvent[][] = []
    for (const range of ((a as { ranges?: unknown }).ranges ?? []) as unknown[]) {
      const rg = range as { type?: unknown; events?: unknown }
      if (!rg || rg.type !== 'ECOSYSTEM' || !Array.isArray(rg.events)) continue
      const events: RangeEvent[] = []
      for (const e of rg.events as Record<string, unknown>[]) {
        if (!e || typeof e !== 'object') continue
        if (typeof e.introduced === 'string' && e.introduced) events.push({ introduced: e.introduced.slice(0, 256) })
        else if (typeof e.fixed === 'string' && e.fixed) events.push({ fixed: e.fixed.slice(0, 256) })
        else if (typeof e.last_affected === 'string' && e.last_affected) events.push({ last_affected: e.last_affected.slice(0, 256) })
      }
      if (events.length) ranges.push(sortEvents(events, cmp))
    }
    const versions = strs((a as { versions?: unknown }).versions, 256)
    if (!ranges.length && !versions.length) continue
    // Several entries for one (ecosystem, package) in a record are one entry with all their ranges.
    const same = affected.find((x) => x.ecosystem === ecosystem && x.package === name)
    if (same) same.ranges.push(...ranges), same.versions.push(...versions)
    else affected.push({ ecosystem, package: name, ranges, versions })
  }
  if (!affected.length) return { skipped: 'ecosystem' }
  const details = str(r.details, 20_000)
  const { severity, score } = recordSeverity(r)
  return {
    record: {
      id: r.id, aliases: strs(r.aliases, 200).slice(0, 100), summary: str(r.summary, 1000) || details.split('\n')[0]!.slice(0, 300),
      details, severity, score, published: str(r.published, 64) || null, modified: str(r.modified, 64) || null, affected,
    },
  }
}

/** The fixed versions an entry names, in order of appearance, each once. */
export function fixedVersions(entries: { ranges: RangeEvent[][] }[]): string[] {
  const out = new Set<string>()
  for (const e of entries) for (const r of e.ranges) for (const ev of r) if (ev.fixed) out.add(ev.fixed)
  return [...out]
}
