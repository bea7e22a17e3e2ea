/** One activity event as a list item: time, type badge, summary and links to its minion and job (all text, never HTML). */
import { Ago } from '../../lib/when'
import type { ActivityEvent } from '../../lib/fleet'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge } from '../../lib/ui'

/** Badge tone of an event: failed returns stand out, routine ones stay quiet. */
function tone(e: ActivityEvent): 'ok' | 'warn' | 'bad' | 'info' | 'muted' {
  if (e.event_type === 'job.ret') return e.success === false ? 'bad' : e.changed ? 'info' : 'ok'
  if (e.event_type === 'minion.offline' || e.event_type === 'key.reject' || e.event_type === 'key.delete') return 'warn'
  if (e.event_type === 'key.pend') return 'warn'
  return 'muted'
}

/** An event line with its context links. */
export function EventRow({ e }: { e: ActivityEvent }) {
  const { can } = useSession()
  return (
    <li class="event">
      <Ago ts={e.ts} />
      <Badge tone={tone(e)}>{e.event_type}</Badge>
      <span class="ev-summary">{e.summary}</span>
      <span class="event-links">
        {e.minion_id && can('view', 'minion:*') ? <a href={href(`/minions/${encodeURIComponent(e.minion_id)}`)}>{e.minion_id}</a> : null}
        {e.jid && can('view', 'job:*') ? <a href={href(`/jobs/${encodeURIComponent(e.jid)}`)}>job {e.jid}</a> : null}
        {e.initiator ? <span class="muted">by {e.initiator}</span> : null}
      </span>
    </li>
  )
}
