/**
 * Exact totals of filtered activity lists, kept per filter: counted whole once, then brought forward by counting only
 * the events stored since (ids only grow, and events change only by retention, which forgets every kept total). A
 * filter's total then costs a count over the last few seconds' events instead of over millions.
 */
import type { AppDeps } from '../../deps'

/** A kept total: the filter's matches among the events with ids up to `upTo` (and, for a time window, ts >= `cutoff`). */
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

/** Forgets every kept total of this database: events were deleted (every other instance forgets its own too). */
export function forgetTotals(deps: AppDeps): void {
  deps.bus?.publish('totals')
  forgetTotalsHere(deps)
}

/** Forgets this service's kept totals (another instance deleted events). */
export function forgetTotalsHere(deps: AppDeps): void {
  kept.get(deps)?.clear()
  generations.set(deps, (generations.get(deps) ?? 0) + 1)
}

/** Bumped by forgetTotals: a count that was under way meanwhile may predate the deletion and is not kept. */
const generations = new WeakMap<AppDeps, number>()

/**
 * The total of the filter `key` over the events with ids up to `top` and ts at or after `cutoff` (-Infinity: no
 * window). Counted whole when not kept (or when ids or time went back), else brought forward from the kept total.
 */
export async function keptTotal(deps: AppDeps, key: string, top: number, cutoff: number, count: Counts): Promise<number> {
  let all = kept.get(deps)
  if (!all) kept.set(deps, (all = new Map()))
  const generation = generations.get(deps) ?? 0
  const was = all.get(key)
  all.delete(key)
  let now: Kept
  if (!was || was.upTo > top || was.cutoff > cutoff) now = { total: await count.upTo(top), upTo: top, cutoff }
  else {
    const left = cutoff > was.cutoff ? await count.left(was.cutoff, cutoff, was.upTo) : 0
    const added = top > was.upTo ? await count.since(was.upTo, top) : 0
    now = { total: was.total - left + added, upTo: top, cutoff }
  }
  if ((generations.get(deps) ?? 0) !== generation) return now.total
  // A Map iterates in insertion order: deleting and re-adding keeps the least recently used first.
  all.set(key, now)
  if (all.size > MAX_KEPT) all.delete(all.keys().next().value!)
  return now.total
}
