/** A minion's presence as a badge: online, offline, or unknown (last known state in the title) while salt-api is silent. */
import type { MinionSummary } from '../../lib/fleet'
import { Badge } from '../../lib/ui'

/** The presence badge. */
export function PresenceBadge({ m }: { m: Pick<MinionSummary, 'online' | 'presence'> }) {
  if (m.presence === 'unknown') return <span title={`last known: ${m.online ? 'online' : 'offline'}`}><Badge tone="warn">unknown</Badge></span>
  return <Badge tone={m.online ? 'ok' : 'muted'}>{m.online ? 'online' : 'offline'}</Badge>
}
