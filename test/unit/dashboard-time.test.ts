// Proves the dashboard's time helpers (issue 23 item 4): the zone is named, UTC when chosen, the ISO form in the chosen
// zone; the compliance chart starts at its first day with a run and has a minions axis and day labels.
import { afterAll, expect, test } from 'bun:test'
import { dateTime, isoTime, setTimeZone } from '../../src/dashboard/lib/format'
import { dayTicks, minionTicks, sinceFirstRun } from '../../src/dashboard/lib/trend-axis'

const TZ = process.env.TZ
// Bun follows a TZ set at run time: Auckland is UTC+13 in November.
process.env.TZ = 'Pacific/Auckland'
afterAll(() => {
  process.env.TZ = TZ
  setTimeZone('local')
})

test('times name their zone, in UTC when chosen; the ISO form carries the offset of the chosen zone', () => {
  const ts = '2026-11-26T12:12:30.123Z'
  setTimeZone('utc')
  expect(dateTime(ts)).toMatch(/UTC$/)
  expect(isoTime(ts)).toBe('2026-11-26T12:12:30Z')
  setTimeZone('local')
  expect(dateTime(ts)).not.toMatch(/UTC$/)
  expect(dateTime(ts)).toMatch(/GMT\+13|NZDT/)
  expect(isoTime(ts)).toBe('2026-11-27T01:12:30+13:00')
  expect(isoTime(null)).toBe('—')
  expect(isoTime('not a time')).toBe('not a time')
})

test('the chart starts at the first day with a run and labels its axes', () => {
  const p = (day: string, healthy: number, never: number) => ({ day, healthy, changed: 0, unhealthy: 0, blocked: 0, never })
  const t = { days: 30, points: [p('2026-11-20', 0, 5), p('2026-11-21', 0, 5), p('2026-11-22', 2, 3), p('2026-11-23', 4, 1), p('2026-11-24', 5, 0), p('2026-11-25', 5, 1)] }
  const from = sinceFirstRun(t)
  expect(from.points.map((x) => x.day)).toEqual(['2026-11-22', '2026-11-23', '2026-11-24', '2026-11-25'])
  expect(sinceFirstRun({ days: 30, points: [p('2026-11-20', 0, 5)] }).points).toEqual([])
  expect(minionTicks(from)).toEqual([0, 3, 6])
  expect(dayTicks(from)).toEqual(['2026-11-22', '2026-11-23', '2026-11-25'])
  expect(dayTicks({ days: 30, points: [p('2026-11-25', 1, 0)] })).toEqual(['2026-11-25'])
})
