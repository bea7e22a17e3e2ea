/** Salt's timestamps: `_stamp` (naive UTC on 3006/3007, `+00:00` on 3008) and job-cache StartTime. */

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 }

/** Parses `_stamp` to epoch ms; null when absent, malformed or not sane (before 2000 or over a day ahead of now). */
export function parseStamp(stamp: unknown, now: number): number | null {
  if (typeof stamp !== 'string') return null
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(stamp.trim())
  if (!m) return null
  const ms = (m[2] ?? '').padEnd(3, '0').slice(0, 3)
  const t = Date.parse(`${m[1]}.${ms}${m[3] ?? 'Z'}`)
  // A date that rolls over (Feb 30) does not print back as itself.
  if (!Number.isFinite(t) || new Date(t).toISOString().slice(0, 19) !== m[1] && !m[3]) return null
  if (t < Date.UTC(2000, 0, 1) || t > now + 86_400_000) return null
  return t
}

/** Parses the job cache's `2026, Nov 21 08:00:07.853917` (UTC) to epoch ms. */
export function parseStartTime(s: unknown): number | null {
  if (typeof s !== 'string') return null
  const m = /^(\d{4}), (\w{3}) (\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(s.trim())
  if (!m || MONTHS[m[2]!] === undefined) return null
  return Date.UTC(+m[1]!, MONTHS[m[2]!]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +((m[7] ?? '').padEnd(3, '0').slice(0, 3)))
}

/** A JID (`YYYYMMDDhhmmssffffff`, maybe `_pid`) to its UTC start time in epoch ms. */
export function jidTime(jid: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})/.exec(jid)
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) : null
}

let jidSeq = 0
/**
 * A new jid in salt's own form (`YYYYMMDDhhmmssffffff`, UTC) for a job Saltdeck starts, so it can note the job before
 * salt reports it; the last three digits count within the millisecond, so one process never repeats one.
 */
export function newJid(now = Date.now()): string {
  const d = new Date(now)
  const p = (n: number, w = 2) => String(n).padStart(w, '0')
  jidSeq = (jidSeq + 1) % 1000
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}${p(d.getUTCMilliseconds(), 3)}${p(jidSeq, 3)}`
}
