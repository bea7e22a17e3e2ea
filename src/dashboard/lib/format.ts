/** Formatting of times and counts for display. */

/** The zone times are shown in: the browser's own, or UTC (the signed-in user's preference, set at sign-in). */
export type ZoneChoice = 'local' | 'utc'
let zone: ZoneChoice = 'local'

/** Sets the zone every later dateTime/isoTime uses. */
export function setTimeZone(z: ZoneChoice) {
  zone = z
}

/** The zone in use. */
export const timeZone = (): ZoneChoice => zone

/** The browser's zone by name (`Pacific/Auckland`), for the choice between it and UTC. */
export const localZoneName = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time'

/** A timestamp as date and time in the browser's locale and the chosen zone, the zone named; an em dash when absent. */
export function dateTime(ts: string | null | undefined): string {
  if (!ts) return '—'
  const d = new Date(ts)
  return Number.isNaN(d.getTime()) ? ts : d.toLocaleString(undefined, { timeZone: zone === 'utc' ? 'UTC' : undefined, timeZoneName: 'short' })
}

/** A timestamp in ISO 8601 in the chosen zone: `2026-11-26T13:06:54Z`, or with the local offset `2026-11-27T02:06:54+13:00`. */
export function isoTime(ts: string | null | undefined, at: ZoneChoice = zone): string {
  if (!ts) return '—'
  const d = new Date(ts)
  if (Number.isNaN(d.getTime())) return ts
  if (at === 'utc') return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
  const off = -d.getTimezoneOffset()
  const local = new Date(d.getTime() + off * 60_000).toISOString().slice(0, 19)
  const p = (n: number) => String(Math.floor(Math.abs(n))).padStart(2, '0')
  return `${local}${off === 0 ? 'Z' : `${off < 0 ? '-' : '+'}${p(off / 60)}:${p(off % 60)}`}`
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
