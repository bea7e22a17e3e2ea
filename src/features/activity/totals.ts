/**
 * Exact totals of filtered activity lists, kept per filter: counted whole once, then brought forward by counting only
 * the events stored since (ids only grow, and events change only by retention, which forgets every kept total). A
 * filter's total then costs a count over the last few seconds' events instead of over millions.
 */
import type { AppDeps } from '../../deps'

/** A kept total: the filter's matches among the events with ids up to `upTo`. */
interface Kept {
  total: number
  upTo: number
}

/** How many filters keep a total (the least recently used goes first). */
const MAX_KEPT = 512
const kept = new WeakMap<AppDeps, Map<string, Kept>>()

/** Forgets every kept total of this database: events were deleted. */
export function forgetTotals(deps: AppDeps): void {
  kept.get(deps)?.clear()
}

/**
 * The total of the filter `key` over the events with ids up to `top`. `countUpTo(top)` counts it whole;
 * `countBetween(from, top)` counts the matches with from < id <= top.
 */
export function keptTotal(deps: AppDeps, key: string, top: number, countUpTo: (top: number) => number, countBetween: (from: number, top: number) => number): number {
  let all = kept.get(deps)
  if (!all) kept.set(deps, (all = new Map()))
  const was = all.get(key)
  all.delete(key)
  let now: Kept
  if (!was || was.upTo > top) now = { total: countUpTo(top), upTo: top }
  else if (was.upTo < top) now = { total: was.total + countBetween(was.upTo, top), upTo: top }
  else now = was
  // A Map iterates in insertion order: deleting and re-adding keeps the least recently used first.
  all.set(key, now)
  if (all.size > MAX_KEPT) all.delete(all.keys().next().value!)
  return now.total
}
