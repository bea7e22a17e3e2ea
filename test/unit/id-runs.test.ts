// The activity notice's id runs (features/activity/id-runs.ts): exactly the ids given, within a NOTIFY payload.
import { expect, test } from 'bun:test'
import { idRuns, MAX_RUNS_TEXT, parseIdRuns } from '../../src/features/activity/id-runs'

const expand = (runs: [number, number][]) => runs.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i))

test('interleaved ids travel as runs that name exactly them, never the ids between', () => {
  const ids = [12, 4, 5, 6, 9, 15, 16, 5]
  expect(idRuns(ids)).toEqual(['4-6,9,12,15-16'])
  expect(expand(parseIdRuns('4-6,9,12,15-16', 100)!)).toEqual([4, 5, 6, 9, 12, 15, 16])
  expect(idRuns([])).toEqual([])
})

test('many scattered ids split into several notices, each within the payload limit, together all of them', () => {
  const ids = Array.from({ length: 3000 }, (_, i) => 1_000_000 + i * 2)
  const texts = idRuns(ids)
  expect(texts.length).toBeGreaterThan(1)
  for (const t of texts) expect(t.length).toBeLessThanOrEqual(MAX_RUNS_TEXT)
  expect(texts.flatMap((t) => expand(parseIdRuns(t, 10_000)!))).toEqual(ids)
})

test('a notice that is not runs, runs backwards or names too many ids is refused', () => {
  for (const bad of ['', '1-', 'a', '5-3', '1,,2', '-1', '1-2-3']) expect(parseIdRuns(bad, 100)).toBeNull()
  expect(parseIdRuns('1-101', 100)).toBeNull()
  expect(parseIdRuns('1-50,60-110', 100)).toBeNull()
  expect(parseIdRuns('1-100', 100)).toEqual([[1, 100]])
})
