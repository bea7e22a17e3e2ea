// Kept activity totals when requests overlap (PostgreSQL answers asynchronously, so requests interleave across their
// awaits): concurrent first requests share one whole count, and a request that read an older top or cutoff than the
// kept one gets its exact total from the difference, never from another whole count.
import { expect, test } from 'bun:test'
import type { AppDeps } from '../../src/deps'
import { forgetTotals, keptTotal, type Counts } from '../../src/features/activity/totals'

/** Events as (id, ts) that all match the filter; counts answer after a turn of the event loop, as a pool does. */
function fakeCounts(events: { id: number; ts: number }[], cutoff: number) {
  const calls = { upTo: 0, since: 0, left: 0 }
  const later = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), 5))
  const count = (p: (e: { id: number; ts: number }) => boolean) => events.filter(p).length
  const counts: Counts = {
    upTo: (top) => (calls.upTo++, later(count((e) => e.id <= top && e.ts >= cutoff))),
    since: (from, top) => (calls.since++, later(count((e) => e.id > from && e.id <= top && e.ts >= cutoff))),
    left: (from, to, upTo) => (calls.left++, later(count((e) => e.ts >= from && e.ts < to && e.id <= upTo))),
  }
  return { counts, calls }
}

const events = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, ts: 1000 + i * 10 }))
const exact = (top: number, cutoff: number) => events.filter((e) => e.id <= top && e.ts >= cutoff).length

test('concurrent first requests count the whole table once', async () => {
  const deps = {} as AppDeps
  const { counts, calls } = fakeCounts(events, -Infinity)
  const totals = await Promise.all([60, 70, 50, 80].map((top) => keptTotal(deps, 'k', top, -Infinity, counts)))
  expect(totals).toEqual([60, 70, 50, 80].map((top) => exact(top, -Infinity)))
  expect(calls.upTo).toBe(1)
})

test('a request with an older top than the kept one subtracts the difference instead of recounting', async () => {
  const deps = {} as AppDeps
  const { counts, calls } = fakeCounts(events, -Infinity)
  expect(await keptTotal(deps, 'k', 90, -Infinity, counts)).toBe(90)
  expect(await keptTotal(deps, 'k', 75, -Infinity, counts)).toBe(75)
  expect(await keptTotal(deps, 'k', 95, -Infinity, counts)).toBe(95)
  expect(calls.upTo).toBe(1)
})

test('a window whose cutoff went back or forward is moved by the slice of time between the cutoffs', async () => {
  const deps = {} as AppDeps
  const at = (cutoff: number) => fakeCounts(events, cutoff)
  const first = at(1500)
  expect(await keptTotal(deps, 'w', 80, 1500, first.counts)).toBe(exact(80, 1500))
  const later = at(1600)
  expect(await keptTotal(deps, 'w', 90, 1600, later.counts)).toBe(exact(90, 1600))
  const earlier = at(1400)
  expect(await keptTotal(deps, 'w', 85, 1400, earlier.counts)).toBe(exact(85, 1400))
  expect(later.calls.upTo + earlier.calls.upTo).toBe(0)
})

test('forgetting the totals makes the next request count whole again', async () => {
  const deps = {} as AppDeps
  const { counts, calls } = fakeCounts(events, -Infinity)
  await keptTotal(deps, 'k', 50, -Infinity, counts)
  forgetTotals(deps)
  expect(await keptTotal(deps, 'k', 60, -Infinity, counts)).toBe(60)
  expect(calls.upTo).toBe(2)
})
