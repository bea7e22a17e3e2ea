// Proves the serving memory guard collects only above its soft limit, and stops when asked.
import { expect, test } from 'bun:test'
import { startMemoryGuard } from '../../src/lib/memory'

test('collects while RSS is above the soft limit, never below it, and not after stop', async () => {
  let above = 0
  let below = 0
  const stopAbove = startMemoryGuard(1, () => above++, 20)
  const stopBelow = startMemoryGuard(Number.MAX_SAFE_INTEGER, () => below++, 20)
  await Bun.sleep(150)
  stopAbove()
  stopBelow()
  const seen = above
  // Above a limit of 1 byte every collection is useless: the checks back off (20, 40, 80 ms ...), but do go on.
  expect(seen).toBeGreaterThanOrEqual(2)
  expect(seen).toBeLessThanOrEqual(4)
  expect(below).toBe(0)
  await Bun.sleep(80)
  expect(above).toBe(seen)
})
