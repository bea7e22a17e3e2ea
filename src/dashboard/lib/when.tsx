/** A point in time as the dashboard shows it: locale form with its zone, the ISO form one click (or a hover) away. */
import { useState } from 'preact/hooks'
import { ago, dateTime, isoTime } from './format'

/** Date and time in the chosen zone; a click shows the ISO 8601 form instead (and back), the title holds the other form. */
export function When({ ts }: { ts: string | null | undefined }) {
  const [iso, setIso] = useState(false)
  if (!ts) return <>—</>
  return (
    <button type="button" class="when" aria-pressed={iso} title={iso ? dateTime(ts) : isoTime(ts)} onClick={() => setIso(!iso)}>
      <time dateTime={ts}>{iso ? isoTime(ts) : dateTime(ts)}</time>
    </button>
  )
}

/** "5 minutes ago", its date and time (with the zone) and ISO form in the title. */
export function Ago({ ts }: { ts: string | null | undefined }) {
  if (!ts) return <>never</>
  return <time dateTime={ts} title={`${dateTime(ts)} · ${isoTime(ts)}`}>{ago(ts)}</time>
}
