/**
 * PostgreSQL's activity search off the insert path (drizzle-pg 0008): an event is found from the moment its insert
 * commits, before and after the indexer took it, whatever order concurrent transactions commit in; retention takes
 * its search rows with it.
 */
import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, testWorld } from '../helpers/app'
import { indexActivity, pruneEvents, recordEvents, searchBacklog } from '../../src/features/activity/service'
import { searchCandidates } from '../../src/features/activity/search-index-postgres'
import { activityEvents } from '../../src/db/schema'

const found = async (w: Awaited<ReturnType<typeof testWorld>>, term: string) =>
  (await call(w, 'GET', `/api/activity?search=${encodeURIComponent(term)}`)).body.events.map((e: { summary: string }) => e.summary).sort()

test('queued, indexed, and committed out of id order: every event is found once', async () => {
  const w = await testWorld()
  const t = w.clock.now()
  const ev = (id: string, ts = t) => ({ ts, category: 'minion', event_type: 'minion.start', minion_id: id, summary: `${id} started` })
  await recordEvents(w.deps, [ev('alpha-01'), ev('alpha-02')])
  expect(await searchBacklog(w.deps)).toBe(2)
  expect(await found(w, 'ALPHA')).toEqual(['alpha-01 started', 'alpha-02 started'])
  expect(await indexActivity(w.deps)).toBe(2)
  expect(await searchBacklog(w.deps)).toBe(0)
  expect(await found(w, 'alpha')).toEqual(['alpha-01 started', 'alpha-02 started'])

  // A transaction takes its id first and commits last; another commits meanwhile and the indexer runs.
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let inserted!: () => void
  const began = new Promise<void>((r) => (inserted = r))
  const slow = w.deps.db.tx(async (tx) => {
    await recordEvents(w.deps, [ev('alpha-slow')], tx)
    inserted()
    await held
  })
  await began
  // Another category: the same one's counter row would make it wait for the held transaction's commit.
  await recordEvents(w.deps, [{ ts: t, category: 'key', event_type: 'key.accept', minion_id: 'alpha-fast', summary: 'alpha-fast started' }])
  expect(await indexActivity(w.deps)).toBe(1)
  expect(await found(w, 'alpha')).toEqual(['alpha-01 started', 'alpha-02 started', 'alpha-fast started'])
  release()
  await slow
  // Its smaller id is behind the index's newest, and still found: it waits in the queue, not behind a watermark.
  const ids = await w.deps.db.rows<{ id: number; minion_id: string }>(sql`SELECT id, minion_id FROM activity_events WHERE minion_id IN ('alpha-slow', 'alpha-fast') ORDER BY id`)
  expect(ids.map((r) => r.minion_id)).toEqual(['alpha-slow', 'alpha-fast'])
  expect(await found(w, 'alpha')).toEqual(['alpha-01 started', 'alpha-02 started', 'alpha-fast started', 'alpha-slow started'])
  expect(await indexActivity(w.deps)).toBe(1)
  expect(await found(w, 'alpha')).toEqual(['alpha-01 started', 'alpha-02 started', 'alpha-fast started', 'alpha-slow started'])
  // The kept total too (counted up to the open-transaction horizon, so the late commit is not stepped over).
  expect((await call(w, 'GET', '/api/activity?search=alpha')).body.total).toBe(4)
})

test('retention removes pruned events from the index and the queue', async () => {
  const w = await testWorld()
  const t = w.clock.now()
  await recordEvents(w.deps, [
    { ts: t - 40 * 86_400_000, category: 'minion', event_type: 'minion.start', minion_id: 'old-01', summary: 'old-01 started' },
    { ts: t - 40 * 86_400_000, category: 'minion', event_type: 'minion.start', minion_id: 'old-02', summary: 'old-02 started' },
    { ts: t, category: 'minion', event_type: 'minion.start', minion_id: 'new-01', summary: 'new-01 started' },
  ])
  // One old event indexed, the other still queued.
  await indexActivity(w.deps, 1)
  expect(await pruneEvents(w.deps, 30)).toBe(2)
  const left = async (table: string) => (await w.deps.db.rows<{ n: number }>(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]!.n
  expect((await left('activity_search')) + (await left('activity_search_queue'))).toBe(1)
  expect(await found(w, 'started')).toEqual(['new-01 started'])
})

test('a common word past work_mem: the candidates are one semi-join, not a subplan scanned again for every event', async () => {
  const w = await testWorld()
  const t = w.clock.now()
  await recordEvents(w.deps, Array.from({ length: 6000 }, (_, i) => ({ ts: t, category: 'minion', event_type: 'minion.start', minion_id: `web-${i}`, summary: `web-${i} started` })))
  await indexActivity(w.deps)
  await recordEvents(w.deps, [{ ts: t, category: 'minion', event_type: 'minion.start', minion_id: 'web-late', summary: 'web-late started' }])
  // A small work_mem stands in for a large table: a set that does not fit is not hashed.
  const plan = await w.deps.db.tx(async (tx) => {
    await tx.exec(sql`ANALYZE activity_search`)
    await tx.exec(sql`SET LOCAL work_mem = '64kB'`)
    return (await tx.rows<{ 'QUERY PLAN': string }>(sql`EXPLAIN SELECT count(*) FROM ${activityEvents} WHERE ${searchCandidates('%web%')}`)).map((r) => r['QUERY PLAN']).join('\n')
  })
  // "(SubPlan 1)" in a filter is a subplan run per row; "(hashed SubPlan 1)" is not.
  expect(plan).not.toMatch(/\((?!hashed)[^()]*SubPlan \d+\)/)
  // Indexed and queued events both counted.
  expect((await call(w, 'GET', '/api/activity?search=web&limit=1')).body.total).toBe(6001)
})
