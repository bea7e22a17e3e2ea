/**
 * Event ids on the cluster bus as runs ("4-9,12,15-16"): an activity notice names exactly the events its instance
 * stored, never a range that could hold another instance's events stored meanwhile (those would reach listeners twice).
 */

/** The longest notice text: NOTIFY payloads must stay below PostgreSQL's 8,000 bytes, with the bus's envelope. */
export const MAX_RUNS_TEXT = 7000

/** `ids` as run texts, each at most MAX_RUNS_TEXT long (one per notice). */
export function idRuns(ids: number[]): string[] {
  const sorted = [...new Set(ids)].sort((a, b) => a - b)
  const parts: string[] = []
  for (let i = 0; i < sorted.length; ) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  const texts: string[] = []
  let cur = ''
  for (const p of parts) {
    if (cur && cur.length + 1 + p.length > MAX_RUNS_TEXT) {
      texts.push(cur)
      cur = ''
    }
    cur = cur ? `${cur},${p}` : p
  }
  if (cur) texts.push(cur)
  return texts
}

/** The inclusive runs of a run text; null when it is not one or names more than `maxIds` ids (a bug's, or hostile). */
export function parseIdRuns(text: string, maxIds: number): [number, number][] | null {
  const runs: [number, number][] = []
  let n = 0
  for (const part of text.split(',')) {
    const m = /^(\d{1,15})(?:-(\d{1,15}))?$/.exec(part)
    if (!m) return null
    const from = Number(m[1])
    const to = m[2] === undefined ? from : Number(m[2])
    if (to < from) return null
    n += to - from + 1
    if (n > maxIds) return null
    runs.push([from, to])
  }
  return runs
}
