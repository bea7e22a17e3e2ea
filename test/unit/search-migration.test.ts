// Proves migration 0009 and the search index file: an existing database loses its in-file index and its job-event
// unique key, search.db is created beside it (0600) and rebuilt from the events, legacy job rows still de-duplicate,
// and the service's indexer catches up on its worker thread.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { ManualClock } from '../../src/lib/clock'
import { Logger } from '../../src/lib/log'
import { loadConfig } from '../../src/config'
import type { AppDeps } from '../../src/deps'
import { searchPending, syncSearchIndex } from '../../src/features/activity/search-index-sqlite'
import { attachSearchIndex } from '../../src/db/search-index'
import { SearchIndexer } from '../../src/features/activity/search-indexer'
import { listEvents } from '../../src/features/activity/service'
import { applyFacts } from '../../src/features/ingest/apply'
import { noFacts, type JobReturned } from '../../src/salt/facts'
import { migrateBefore } from '../helpers/migrations'

/** A successful test.ping return of one minion. */
const pingReturn = (jid: string, minionId: string, ts: number): JobReturned => ({ jid, minionId, fun: 'test.ping', ret: true, retcode: 0, success: true, ts, stampMs: ts })

const dir = mkdtempSync(join(tmpdir(), 'sd-search-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const T0 = Date.parse('2026-11-21T08:00:00Z')
const ALL = [{ verb: 'view', resource_glob: '*' }]

/** A database file at migration 0008 with `n` job returns, recorded and indexed the old way. */
function oldDb(name: string, n: number) {
  mkdirSync(join(dir, name))
  const db = openDb(join(dir, name, 'saltdeck.db'))
  migrateBefore(db, '0009_search_index_file')
  const c = db.$client
  c.query("INSERT INTO jobs (jid, fun, started_at) VALUES ('20261121080000000001', 'test.ping', ?1)").run(T0)
  for (let i = 0; i < n; i++) {
    c.query("INSERT INTO job_returns (jid, minion_id, ret, received_at) VALUES ('20261121080000000001', ?1, 'true', ?2)").run(`web-${i}`, T0)
    c.query(`INSERT INTO activity_events (ts, category, event_type, minion_id, jid, fun, summary, dedupe_key)
      VALUES (?2, 'job', 'job.ret', ?1, '20261121080000000001', 'test.ping', ?1 || ' returned test.ping', 'job.ret|20261121080000000001|' || ?1)`).run(`web-${i}`, T0)
  }
  c.exec("INSERT INTO activity_counts (category, n) VALUES ('job', " + n + ')')
  c.exec("INSERT INTO activity_fts (activity_fts) VALUES ('rebuild'); UPDATE activity_fts_state SET watermark = (SELECT max(id) FROM activity_events)")
  return db
}
const depsOf = (db: ReturnType<typeof openDb>): AppDeps => ({ db, clock: new ManualClock(T0 + 60_000), config: loadConfig({}), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) })

test('0009 drops the in-file index and the unique key; search.db is created and rebuilt from the events', async () => {
  const db = oldDb('a', 120)
  await migrate(db)
  // 0010 drops the dedupe_key column the old rows carried; the rows stay.
  expect(db.$client.query<{ name: string }, []>('SELECT name FROM pragma_table_info(\'activity_events\')').all().map((c) => c.name)).not.toContain('dedupe_key')
  expect(db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM activity_events').get()!.n).toBe(120)
  attachSearchIndex(db.$client)
  const names = db.$client.query<{ name: string }, []>("SELECT name FROM main.sqlite_master").all().map((r) => r.name)
  expect(names).not.toContain('activity_fts')
  expect(names).not.toContain('activity_fts_state')
  expect(names).not.toContain('activity_fts_delete')
  expect(names).not.toContain('activity_job_once')
  expect(statSync(join(dir, 'a', 'search.db')).mode & 0o777).toBe(0o600)
  const deps = depsOf(db)
  expect(searchPending(db.$client)).toBe(120)
  expect(syncSearchIndex(db.$client, 50)).toBe(50)
  expect(syncSearchIndex(db.$client)).toBe(70)
  expect(searchPending(db.$client)).toBe(0)
  // Through the index only: nothing is past the watermark.
  expect((await listEvents(deps, { search: 'eb-11' }, ALL, 100, 0)).events.map((e) => e.minion_id).sort()).toEqual(['web-11', 'web-110', 'web-111', 'web-112', 'web-113', 'web-114', 'web-115', 'web-116', 'web-117', 'web-118', 'web-119'])
  // A legacy return seen again is still a duplicate; a new one lands once.
  const ret = (m: string) => ({ ...noFacts(), returns: [pingReturn('20261121080000000001', m, T0 + 1)] })
  expect((await applyFacts(deps, [ret('web-7'), ret('web-new'), ret('web-new')])).map((e) => e.minion_id)).toEqual(['web-new'])
  expect((await listEvents(deps, {}, ALL, 1, 0)).total).toBe(121)
  db.$client.close()
})

test('the service indexer catches up on its worker thread, beside writes on the main connection', async () => {
  const db = oldDb('b', 3000)
  await migrate(db)
  attachSearchIndex(db.$client)
  const deps = depsOf(db)
  const indexer = new SearchIndexer(deps)
  await indexer.start()
  expect(indexer.threaded).toBe(true)
  await applyFacts(deps, [{ ...noFacts(), returns: Array.from({ length: 500 }, (_, i) => pingReturn('20261121080000000002', `db-${i}`, T0 + 2)) }])
  const end = Date.now() + 10_000
  while (searchPending(db.$client) > 0 && Date.now() < end) await Bun.sleep(20)
  expect(searchPending(db.$client)).toBe(0)
  await indexer.stop()
  // Found through the index the worker wrote (the watermark covers every row, so no scan is involved).
  expect((await listEvents(deps, { search: 'db-499 returned' }, ALL, 10, 0)).events.map((e) => e.minion_id)).toEqual(['db-499'])
  expect((await listEvents(deps, { search: 'web-2999' }, ALL, 10, 0)).total).toBe(1)
  db.$client.close()
})
