// Proves the serving memory guard collects only above its soft limit, backs off while collecting does not help, and stops.
import { expect, test } from 'bun:test'
import { startMemoryGuard } from '../../src/lib/memory'

/** A process whose RSS the test sets; each collection is timed. */
function fakeProcess(rss: number, afterCollect: number) {
  const p = { rss, collections: [] as number[] }
  return { p, probe: { rss: () => p.rss, collect: () => (p.collections.push(performance.now()), (p.rss = afterCollect)) } }
}
const until = async (ok: () => boolean) => {
  const end = performance.now() + 5000
  while (!ok() && performance.now() < end) await Bun.sleep(5)
}

test('below the limit nothing is collected', async () => {
  const { p, probe } = fakeProcess(100, 100)
  const stop = startMemoryGuard(200, () => {}, 5, probe)
  await Bun.sleep(60)
  stop()
  expect(p.collections).toEqual([])
})

test('above it a collection runs and is counted; one that helps keeps the checks frequent', async () => {
  const { p, probe } = fakeProcess(300, 100)
  let counted = 0
  const took: number[] = []
  const stop = startMemoryGuard(200, (seconds) => (counted++, took.push(seconds)), 5, probe)
  await until(() => counted === 1)
  // Told how long the collection took (the fake one takes next to nothing).
  expect(took[0]!).toBeGreaterThanOrEqual(0)
  expect(took[0]!).toBeLessThan(1)
  expect(p.collections.length).toBe(1)
  // Up again: collected again soon (the wait went back to 5 ms).
  p.rss = 300
  await until(() => counted === 2)
  stop()
  expect(counted).toBe(2)
})

test('collections that leave RSS above the limit back off, doubling the wait; nothing runs after stop', async () => {
  const { p, probe } = fakeProcess(300, 300)
  const stop = startMemoryGuard(200, () => {}, 10, probe)
  await until(() => p.collections.length >= 5)
  stop()
  const gaps = p.collections.slice(1).map((t, i) => t - p.collections[i]!)
  // A collection finishes in the background, so it is judged at the next check: 10 ms later RSS is still above the
  // limit, then the waits double: 10, 20, 40, 80 ms apart (timers may fire late, never early).
  expect(gaps[0]!).toBeGreaterThanOrEqual(9)
  expect(gaps[1]!).toBeGreaterThanOrEqual(19)
  expect(gaps[2]!).toBeGreaterThanOrEqual(39)
  expect(gaps[3]!).toBeGreaterThanOrEqual(79)
  const seen = p.collections.length
  await Bun.sleep(200)
  expect(p.collections.length).toBe(seen)
})
