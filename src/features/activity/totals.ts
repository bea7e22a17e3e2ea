/**
 * Exact totals of filtered activity lists, kept per filter: counted whole once, then brought forward by counting only
 * the events stored since (the position a total is kept at only grows: the newest id on SQLite, the horizon of open
 * transactions on PostgreSQL, store.ts countedTop; events change only by retention, which forgets every kept total).
 * A filter's total then costs a count over the last few seconds' events instead of over millions.
 */
import type { AppDeps } from '../../deps'

/** A kept total: the filter's matches among the events counted at position `upTo` (and, for a time window, ts >= `cutoff`). */
interface Kept {
  total: number
  upTo: number
  cutoff: number
}

/** How to count a filter's matches: whole, among new ids, and among the events a window's moving start has left. */
export interface Counts {
  /** Matches with id <= top (and ts >= the current cutoff). */
  upTo(top: number): Promise<number>
  /** Matches with from < id <= top (and ts >= the current cutoff). */
  since(from: number, top: number): Promise<number>
  /** Matches with from <= ts < to and id <= upTo: those a window starting later no longer holds. */
  left(from: number, to: number, upTo: number): Promise<number>
}

/** How many filters keep a total (the least recently used goes first). */
const MAX_KEPT = 512
const kept = new WeakMap<AppDeps, Map<string, Kept>>()

/** Whole counts under way, per filter: requests that arrive meanwhile wait for it instead of counting again. */
const counting = new WeakMap<AppDeps, Map<string, Promise<Kept>>>()

/** Forgets every kept total of this database: events were deleted (every other instance forgets its own too). */
export function forgetTotals(deps: AppDeps): void {
  deps.bus?.publish('totals')
  forgetTotalsHere(deps)
}

/** Forgets this service's kept totals (another instance deleted events). */
export function forgetTotalsHere(deps: AppDeps): void {
  kept.get(deps)?.clear()
  counting.get(deps)?.clear()
  generations.set(deps, (generations.get(deps) ?? 0) + 1)
}

/** Bumped by forgetTotals: a count that was under way meanwhile may predate the deletion and is not kept. */
const generations = new WeakMap<AppDeps, number>()

/**
 * The total of the filter `key` over the events with ids up to `top` and ts at or after `cutoff` (-Infinity: no
 * window). Counted whole once per filter, then moved from the kept total to (top, cutoff) by counting only the
 * difference, in either direction: on PostgreSQL requests overlap across their awaits, so one that read an older top
 * (or cutoff) often arrives after a newer one was kept, and concurrent first requests would each count the whole table.
 */
export async function keptTotal(deps: AppDeps, key: string, top: number, cutoff: number, count: Counts): Promise<number> {
  let all = kept.get(deps)
  if (!all) kept.set(deps, (all = new Map()))
  let inFlight = counting.get(deps)
  if (!inFlight) counting.set(deps, (inFlight = new Map()))
  const generation = generations.get(deps) ?? 0
  let was = all.get(key)
  if (!was) {
    let whole = inFlight.get(key)
    if (!whole) {
      const mine = count.upTo(top).then((total) => ({ total, upTo: top, cutoff }))
      inFlight.set(key, (whole = mine))
      const done = () => {
        if (inFlight.get(key) === mine) inFlight.delete(key)
      }
      mine.then(done, done)
    }
    was = await whole
  }
  // From (was.upTo, was.cutoff) to (was.upTo, cutoff): the slice of time between the two cutoffs, among the kept ids.
  let total = was.total
  if (cutoff > was.cutoff) total -= await count.left(was.cutoff, cutoff, was.upTo)
  else if (cutoff < was.cutoff) total += await count.left(cutoff, was.cutoff, was.upTo)
  // Then to (top, cutoff): the ids between the two tops.
  if (top > was.upTo) total += await count.since(was.upTo, top)
  else if (top < was.upTo) total -= await count.since(top, was.upTo)
  if ((generations.get(deps) ?? 0) !== generation) return total
  // Kept only when not older than what is kept now (another request may have kept a newer one meanwhile). A Map
  // iterates in insertion order: deleting and re-adding keeps the least recently used first.
  const now = all.get(key)
  const keep = !now || (top >= now.upTo && cutoff >= now.cutoff) ? { total, upTo: top, cutoff } : now
  all.delete(key)
  all.set(key, keep)
  if (all.size > MAX_KEPT) all.delete(all.keys().next().value!)
  return total
}
