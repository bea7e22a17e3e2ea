/**
 * Grains held to a nesting depth SQLite's JSON functions read. A document nested deeper than SQLite's limit (1,000)
 * is "malformed JSON" to every json_each and json_extract over the table: one minion's custom grain broke grain
 * search (500) and the whole fleet's inventory refresh (issue 20). Such values are cut at MAX_GRAIN_DEPTH.
 */

/** The deepest nesting kept (real grains nest a few levels; SQLite reads up to 1,000). */
export const MAX_GRAIN_DEPTH = 100

/** What stands in for a value nested past MAX_GRAIN_DEPTH. */
export const CUT_MARK = `[nested deeper than ${MAX_GRAIN_DEPTH} levels: not kept]`

/** Whether `v` nests objects or lists `limit` levels deep or more below `depth`. */
function tooDeep(v: unknown, depth: number): boolean {
  if (!v || typeof v !== 'object') return false
  if (depth >= MAX_GRAIN_DEPTH) return true
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (tooDeep(x, depth + 1)) return true
  return false
}

/** A copy of `v` with every object or list nested past MAX_GRAIN_DEPTH replaced by CUT_MARK. */
function cutAt(v: unknown, depth: number): unknown {
  if (!v || typeof v !== 'object') return v
  if (depth >= MAX_GRAIN_DEPTH) return CUT_MARK
  if (Array.isArray(v)) return v.map((x) => cutAt(x, depth + 1))
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cutAt(x, depth + 1)]))
}

/**
 * `grains` as given when it nests less than MAX_GRAIN_DEPTH, else a copy cut there, and whether it was cut. Both walks
 * stop at MAX_GRAIN_DEPTH, so a hostile document cannot exhaust the stack either.
 */
export function boundDepth(grains: Record<string, unknown>): { grains: Record<string, unknown>; cut: boolean } {
  if (!tooDeep(grains, 0)) return { grains, cut: false }
  return { grains: cutAt(grains, 0) as Record<string, unknown>, cut: true }
}
