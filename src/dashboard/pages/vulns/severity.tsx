/** A record's severity as a badge: the worse, the louder. */
import { Badge } from '../../lib/ui'

const TONE = { critical: 'bad', high: 'bad', medium: 'warn', low: 'info', none: 'muted', unknown: 'muted' } as const

/** The severity badge (with the CVSS score when the record has one). */
export function SeverityBadge({ severity, score }: { severity: string; score?: number | null }) {
  const tone = TONE[severity as keyof typeof TONE] ?? 'muted'
  return <Badge tone={tone}>{severity}{score != null ? ` ${score.toFixed(1)}` : ''}</Badge>
}
