/** Whether an installed version falls inside a record's affected ranges (OSV's evaluation of ECOSYSTEM ranges). */

/** One range event as stored: exactly one of the three is set. */
export interface RangeEvent {
  introduced?: string
  fixed?: string
  last_affected?: string
}

/** The verdict for one version: affected or not, and the version that fixes it (null when no later fixed version is known). */
export interface Verdict {
  affected: boolean
  fixed: string | null
}

const NOT: Verdict = { affected: false, fixed: null }

/**
 * OSV's rule: walk a range's events in version order (sortEvents, done once at import); an `introduced` at or below the version turns it affected, a
 * `fixed` at or below it (or a `last_affected` below it) turns it back. `introduced: "0"` is before every version.
 * A version listed in `versions` is affected whatever the ranges say.
 */
export function evaluate(version: string, ranges: RangeEvent[][], versions: string[], cmp: (a: string, b: string) => number): Verdict {
  let hit: Verdict = NOT
  for (const events of ranges) {
    let affected = false
    let fixed: string | null = null
    for (const e of events) {
      if (e.introduced !== undefined) {
        if (e.introduced === '0' || cmp(version, e.introduced) >= 0) affected = true
      } else if (e.fixed !== undefined) {
        if (cmp(version, e.fixed) >= 0) affected = false
        else if (affected && fixed === null) fixed = e.fixed
      } else if (e.last_affected !== undefined) {
        if (cmp(version, e.last_affected) > 0) affected = false
      }
    }
    if (affected) {
      if (!hit.affected || (fixed !== null && (hit.fixed === null || cmp(fixed, hit.fixed) < 0))) hit = { affected: true, fixed }
    }
  }
  if (!hit.affected && versions.includes(version)) return { affected: true, fixed: null }
  return hit
}

/** Events in version order, `introduced: "0"` first, so the first `fixed` met above a version is the nearest fix. */
export function sortEvents(events: RangeEvent[], cmp: (a: string, b: string) => number): RangeEvent[] {
  const at = (e: RangeEvent) => e.introduced ?? e.fixed ?? e.last_affected ?? ''
  return [...events].sort((a, b) => {
    if (a.introduced === '0') return b.introduced === '0' ? 0 : -1
    if (b.introduced === '0') return 1
    return cmp(at(a), at(b))
  })
}
