/** The compliance chart's frame: the days it draws (from the first with a run) and its axis. */
import { TREND_STATUSES, type Trend } from './fleet'

/** The trend from its first day on which any minion had a run: days before the install are not "never run" bars. */
export function sinceFirstRun(t: Trend): Trend {
  const first = t.points.findIndex((p) => p.healthy + p.changed + p.unhealthy + p.blocked > 0)
  return { ...t, points: first < 0 ? [] : t.points.slice(first) }
}

/** The minions axis: 0, the middle and the top (the largest day total), rounded to whole minions. */
export function minionTicks(t: Trend): number[] {
  const max = Math.max(1, ...t.points.map((p) => TREND_STATUSES.reduce((a, s) => a + p[s], 0)))
  return max < 2 ? [0, max] : [0, Math.round(max / 2), max]
}

/** The day labels under the chart: the first, the last and one in the middle when there are three or more days. */
export function dayTicks(t: Trend): string[] {
  const n = t.points.length
  if (!n) return []
  if (n < 3) return t.points.map((p) => p.day)
  return [t.points[0]!.day, t.points[Math.floor((n - 1) / 2)]!.day, t.points[n - 1]!.day]
}
