/** Formatting of times and counts for display. */

/** A timestamp as local date and time, or an em dash when absent. */
export function dateTime(ts: string | null | undefined): string {
  if (!ts) return '—'
  const d = new Date(ts)
  return Number.isNaN(d.getTime()) ? ts : d.toLocaleString()
}

/** "N minutes ago" style age of a timestamp, relative to `now`. */
export function ago(ts: string | null | undefined, now = Date.now()): string {
  if (!ts) return 'never'
  const s = Math.max(0, Math.round((now - new Date(ts).getTime()) / 1000))
  if (s < 60) return `${s} s ago`
  const m = Math.floor(s / 60)
  if (m < 120) return `${m} minute${m === 1 ? '' : 's'} ago`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h} hours ago`
  return `${Math.floor(h / 24)} days ago`
}

/** A count with thousands separators. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString()
}
