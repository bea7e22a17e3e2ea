/** Severity of OSV records: the record's own label, else the CVSS base score computed from its vector and banded. */
import { cvss4Score } from './cvss4'

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'none' | 'unknown'

const V3: Record<string, Record<string, number>> = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 }, AC: { L: 0.77, H: 0.44 }, UI: { N: 0.85, R: 0.62 },
  C: { H: 0.56, L: 0.22, N: 0 }, I: { H: 0.56, L: 0.22, N: 0 }, A: { H: 0.56, L: 0.22, N: 0 },
}

/** CVSS v3.1's Roundup (avoids floating-point surprises); v3.0 rounds up to one decimal directly. */
const roundup31 = (x: number) => {
  const i = Math.round(x * 100000)
  return i % 10000 === 0 ? i / 100000 : (Math.floor(i / 10000) + 1) / 10
}
const roundup30 = (x: number) => Math.ceil(x * 10) / 10

/** The base score of a CVSS v3.0/v3.1 vector, or null when malformed. */
function v3(vector: string, version: '3.0' | '3.1'): number | null {
  const m: Record<string, string> = {}
  for (const part of vector.split('/').slice(1)) {
    const [k, v] = part.split(':')
    if (!k || v === undefined || k in m) return null
    m[k] = v
  }
  for (const k of ['AV', 'AC', 'PR', 'UI', 'S', 'C', 'I', 'A']) if (!(k in m)) return null
  const scope = m.S
  if (scope !== 'U' && scope !== 'C') return null
  const pr = { N: 0.85, L: scope === 'C' ? 0.68 : 0.62, H: scope === 'C' ? 0.5 : 0.27 }[m.PR!]
  const [av, ac, ui, c, i, a] = (['AV', 'AC', 'UI', 'C', 'I', 'A'] as const).map((k) => V3[k]![m[k]!])
  if ([pr, av, ac, ui, c, i, a].some((x) => x === undefined)) return null
  const iss = 1 - (1 - c!) * (1 - i!) * (1 - a!)
  const impact = scope === 'U' ? 6.42 * iss : 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15
  const expl = 8.22 * av! * ac! * pr! * ui!
  if (impact <= 0) return 0
  const up = version === '3.1' ? roundup31 : roundup30
  return scope === 'U' ? up(Math.min(impact + expl, 10)) : up(Math.min(1.08 * (impact + expl), 10))
}

/** The base score of a CVSS vector (v3.0, v3.1, v4.0), or null when malformed or of another version. */
export function cvssScore(vector: string): { version: '3.0' | '3.1' | '4.0'; score: number } | null {
  if (typeof vector !== 'string') return null
  if (vector.startsWith('CVSS:4.0/')) {
    const s = cvss4Score(vector)
    return s === null ? null : { version: '4.0', score: s }
  }
  if (vector.startsWith('CVSS:3.1/')) {
    const s = v3(vector, '3.1')
    return s === null ? null : { version: '3.1', score: s }
  }
  if (vector.startsWith('CVSS:3.0/')) {
    const s = v3(vector, '3.0')
    return s === null ? null : { version: '3.0', score: s }
  }
  return null
}

/** CVSS's qualitative band of a score. */
export function severityBand(score: number): Exclude<Severity, 'unknown'> {
  if (score === 0) return 'none'
  if (score < 4) return 'low'
  if (score < 7) return 'medium'
  if (score < 9) return 'high'
  return 'critical'
}

const LABELS: Record<string, Severity> = {
  critical: 'critical', high: 'high', important: 'high', medium: 'medium', moderate: 'medium', low: 'low', negligible: 'low', unimportant: 'low',
}

/** The severity of one OSV record: its database_specific label, else its highest computed CVSS score banded, else unknown. */
export function recordSeverity(record: unknown): { severity: Severity; score: number | null } {
  const r = (record && typeof record === 'object' ? record : {}) as Record<string, unknown>
  let best: number | null = null
  const consider = (list: unknown) => {
    if (!Array.isArray(list)) return
    for (const s of list) {
      if (!s || typeof s !== 'object') continue
      const { type, score } = s as { type?: unknown; score?: unknown }
      if ((type !== 'CVSS_V3' && type !== 'CVSS_V4') || typeof score !== 'string') continue
      const c = cvssScore(score)
      if (c && (best === null || c.score > best)) best = c.score
    }
  }
  consider(r.severity)
  if (Array.isArray(r.affected)) for (const a of r.affected) if (a && typeof a === 'object') consider((a as { severity?: unknown }).severity)
  const ds = r.database_specific as { severity?: unknown } | undefined
  const label = ds && typeof ds === 'object' && typeof ds.severity === 'string' ? LABELS[ds.severity.toLowerCase()] : undefined
  if (label) return { severity: label, score: best }
  return best === null ? { severity: 'unknown', score: null } : { severity: severityBand(best), score: best }
}
