/** Short human forms of durations for the poller tables. */

/** Seconds as "45 s", "5 min", "2 h", "1 d", or "off" for 0. */
export function interval(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—'
  if (seconds <= 0) return 'off'
  const units: [number, string][] = [[86400, 'd'], [3600, 'h'], [60, 'min']]
  for (const [n, u] of units) if (seconds % n === 0) return `${seconds / n} ${u}`
  return `${seconds} s`
}

/** Milliseconds as "850 ms", "1.2 s", "3 min 5 s". */
export function elapsed(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)} min ${s % 60} s`
}

/** Time until a future timestamp: "in 45 s", "in 5 min", "in 2 h"; "due" once it has passed. */
export function until(ts: string | null | undefined, now = Date.now()): string {
  if (!ts) return '—'
  const s = Math.round((new Date(ts).getTime() - now) / 1000)
  if (Number.isNaN(s)) return ts
  if (s <= 0) return 'due'
  if (s < 120) return `in ${s} s`
  if (s < 7200) return `in ${Math.round(s / 60)} min`
  if (s < 172_800) return `in ${Math.round(s / 3600)} h`
  return `in ${Math.round(s / 86400)} days`
}
