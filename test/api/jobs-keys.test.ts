// Proves the job index, job returns, the key list and the inventory refresh record (contract §7-§8 read side and the writes pollers call).
import { expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { MAX_RETURN_CHARS, recordJobReturns, upsertJobs } from '../../src/features/jobs/service'
import { keysWithoutFingerprint, recordGrains } from '../../src/features/minions/service'
import { applyFacts } from '../../src/features/ingest/apply'
import { noFacts, type KeyAct } from '../../src/salt/facts'
import { finishRefresh, progressRefresh, startRefresh } from '../../src/features/inventory/service'

const T0 = Date.parse('2026-11-21T08:00:00.000Z')

test('jobs: indexed once, filled in later, listed newest first with filters and returns', async () => {
  const w = await testWorld()
  expect(await upsertJobs(w.deps.db, [
    { jid: '20261121080000000001', fun: 'state.apply', target: 'web*', tgtType: 'glob', user: 'alice', startedAt: T0 + 1 },
    { jid: '20261121080000000002', fun: 'test.ping', target: '*', tgtType: 'glob', user: 'bob', startedAt: T0 + 2 },
  ])).toEqual(['20261121080000000001', '20261121080000000002'])
  // The jobs poller sees the first job again with its minion list: nothing new, the unknown field is filled.
  expect(await upsertJobs(w.deps.db, [{ jid: '20261121080000000001', fun: 'x', target: null, tgtType: null, user: null, minions: ['web-01', 'web-02'], startedAt: T0 }])).toEqual([])
  expect(await recordJobReturns(w.deps.db, [
    { jid: '20261121080000000001', minionId: 'web-01', success: true, retcode: 0, ret: { a: 1 }, receivedAt: T0 + 10 },
    { jid: '20261121080000000001', minionId: 'web-01', success: true, retcode: 0, ret: { a: 1 }, receivedAt: T0 + 11 },
    { jid: '20261121080000000001', minionId: 'web-02', success: false, retcode: 2, ret: 'x'.repeat(MAX_RETURN_CHARS + 1), receivedAt: T0 + 12 },
  ])).toEqual(new Set(['20261121080000000001|web-01', '20261121080000000001|web-02']))
  const list = (await call(w, 'GET', '/api/jobs', { who: 'viewer' })).body
  expect(list.total).toBe(2)
  expect(list.jobs.map((j: any) => j.jid)).toEqual(['20261121080000000002', '20261121080000000001'])
  expect(list.jobs[1]).toMatchObject({ fun: 'state.apply', user: 'alice', minions: ['web-01', 'web-02'], returned: 2, started_at: '2026-11-21T08:00:00.001Z' })
  expect((await call(w, 'GET', '/api/jobs?fun=test.ping')).body.jobs.map((j: any) => j.jid)).toEqual(['20261121080000000002'])
  expect((await call(w, 'GET', '/api/jobs?user=alice&limit=1&offset=0')).body.total).toBe(1)
  const d = (await call(w, 'GET', '/api/jobs/20261121080000000001')).body
  expect(d.returns.map((r: any) => [r.minion_id, r.success, r.retcode])).toEqual([['web-01', true, 0], ['web-02', false, 2]])
  expect(d.returns[0].return).toEqual({ a: 1 })
  expect(d.returns[1].return.truncated).toBe(true)
  expect(await call(w, 'GET', '/api/jobs/nope')).toMatchObject({ status: 404, body: { detail: 'Job not found' } })
})

test('jobs: a jid twice in one batch is indexed once, its later fields filling the unknown ones; new ones named once, in order', async () => {
  const w = await testWorld()
  expect(await upsertJobs(w.deps.db, [{ jid: '20261121080000000011', fun: 'test.ping', target: '*', tgtType: 'glob', user: 'alice', startedAt: T0 }])).toEqual(['20261121080000000011'])
  expect(await upsertJobs(w.deps.db, [
    { jid: '20261121080000000013', fun: 'state.apply', target: null, tgtType: null, user: null, startedAt: T0 + 3 },
    { jid: '20261121080000000011', fun: 'other', target: 'x', tgtType: 'list', user: 'bob', minions: ['web-01'], startedAt: T0 },
    { jid: '20261121080000000012', fun: 'cmd.run', target: 'web-01', tgtType: 'glob', user: 'carol', startedAt: T0 + 2 },
    { jid: '20261121080000000013', fun: 'ignored', target: 'db*', tgtType: 'glob', user: 'dave', minions: ['db-01'], startedAt: T0 + 3 },
  ])).toEqual(['20261121080000000013', '20261121080000000012'])
  const d = (await call(w, 'GET', '/api/jobs/20261121080000000013')).body
  expect(d).toMatchObject({ fun: 'state.apply', target: 'db*', user: 'dave', minions: ['db-01'] })
  // A known job keeps what it had; only its unknown minion list is filled.
  expect((await call(w, 'GET', '/api/jobs/20261121080000000011')).body).toMatchObject({ fun: 'test.ping', target: '*', user: 'alice', minions: ['web-01'] })
  expect((await call(w, 'GET', '/api/jobs')).body.total).toBe(3)
})

test('returns: stored in chunks, only the new ones named; the first of a key wins; a NUL does not fail the batch', async () => {
  const w = await testWorld()
  const jid = '20261121080000000009'
  await upsertJobs(w.deps.db, [{ jid, fun: 'test.ping', target: '*', tgtType: 'glob', user: 'alice', startedAt: T0 }])
  const ret = (i: number, at: number) => ({ jid, minionId: `m-${String(i).padStart(4, '0')}`, success: true, retcode: 0, ret: { i, at }, receivedAt: T0 + at })
  // 1,200 returns: more than one statement's chunk on PostgreSQL.
  const first = await recordJobReturns(w.deps.db, Array.from({ length: 1200 }, (_, i) => ret(i, 1)))
  expect(first.size).toBe(1200)
  // Again with 300 new ones among them: only those are new, and the stored ones keep their first return.
  const again = await recordJobReturns(w.deps.db, Array.from({ length: 1500 }, (_, i) => ret(i, 2)))
  expect([...again].sort()).toEqual(Array.from({ length: 300 }, (_, i) => `${jid}|m-${1200 + i}`))
  const d = (await call(w, 'GET', `/api/jobs/${jid}`)).body
  expect(d.returns.length).toBe(1500)
  expect(d.returns.find((r: any) => r.minion_id === 'm-0005').return).toEqual({ i: 5, at: 1 })
  expect(d.returns.find((r: any) => r.minion_id === 'm-1205').return).toEqual({ i: 1205, at: 2 })
  // A return whose text holds a NUL is stored (as U+FFFD on PostgreSQL, whose text has no NUL), with the rest of its batch.
  const nul = await recordJobReturns(w.deps.db, [{ ...ret(9000, 3), ret: 'a\0b' }, ret(9001, 3)])
  expect(nul.size).toBe(2)
  const stored = (await call(w, 'GET', `/api/jobs/${jid}`)).body.returns.find((r: any) => r.minion_id === 'm-9000').return
  expect(['a\0b', 'a\uFFFDb']).toContain(stored)
})

test("a job's positional and keyword arguments are answered apart (arguments, kwargs) beside salt's raw arg", async () => {
  const w = await testWorld()
  // As salt publishes `salt '*' state.apply mystate test=True pillar='{"a": 1}'`: the keywords ride in arg as one object.
  const arg = ['mystate', { __kwarg__: true, test: true, pillar: { a: 1 } }]
  await upsertJobs(w.deps.db, [
    { jid: '20261121080000000001', fun: 'state.apply', target: '*', tgtType: 'glob', user: 'root', arg, startedAt: T0 },
    { jid: '20261121080000000002', fun: 'test.ping', target: '*', tgtType: 'glob', user: 'root', arg: [], startedAt: T0 + 1 },
    { jid: '20261121080000000003', fun: 'test.ping', target: '*', tgtType: 'glob', user: 'root', startedAt: T0 + 2 },
  ])
  expect((await call(w, 'GET', '/api/jobs/20261121080000000001')).body).toMatchObject({ arg, arguments: ['mystate'], kwargs: { test: true, pillar: { a: 1 } }, sls: ['mystate'] })
  const list = (await call(w, 'GET', '/api/jobs')).body.jobs
  expect(list.map((j: any) => [j.jid, j.arguments, j.kwargs])).toEqual([
    ['20261121080000000003', null, null], ['20261121080000000002', [], {}], ['20261121080000000001', ['mystate'], { test: true, pillar: { a: 1 } }],
  ])
})

test('a job.new whose minions salt did not name says so, never "(0 minions)"', async () => {
  const w = await testWorld()
  await applyFacts(w.deps, [{ ...noFacts(), jobs: [
    { jid: '20261121080000000001', fun: 'test.ping', target: '*', tgtType: 'glob', user: 'root', minions: null, startedAt: T0, ts: T0 },
    { jid: '20261121080000000002', fun: 'test.ping', target: 'none*', tgtType: 'glob', user: 'root', minions: [], startedAt: T0, ts: T0 },
  ] }])
  expect((await call(w, 'GET', '/api/activity?event_type=job.new')).body.events.map((e: any) => e.summary).sort()).toEqual([
    'test.ping dispatched to * (minions not known)', 'test.ping dispatched to none* (0 minions)',
  ])
})

test('keys: minion ids grouped by key state, sorted', async () => {
  const w = await testWorld()
  const keys: [string, KeyAct][] = [['web-02', 'accept'], ['web-01', 'accept'], ['new-1', 'pend'], ['bad-1', 'reject'], ['dup', 'denied']]
  await applyFacts(w.deps, [{ ...noFacts(), keys: keys.map(([minionId, act]) => ({ minionId, act, ts: w.clock.now() })) }])
  await recordGrains(w.deps, [{ id: 'no-key', grains: {} }])
  // Each key names the salt sources it was seen through (the key list came through `default`).
  const d = ['default']
  expect((await call(w, 'GET', '/api/keys', { who: 'viewer' })).body).toEqual({
    accepted: ['web-01', 'web-02'], pending: ['new-1'], rejected: ['bad-1'], denied: ['dup'], fingerprints: {},
    sources: { 'web-01': d, 'web-02': d, 'new-1': d, 'bad-1': d, dup: d },
  })
})

test('keys: fingerprints are stored for the key state they were read in, kept on accept, dropped when the key may be another', async () => {
  const w = await testWorld()
  const at = () => w.clock.now()
  await applyFacts(w.deps, [{ ...noFacts(), keys: [{ minionId: 'new-1', act: 'pend', ts: at() }, { minionId: 'web-01', act: 'accept', ts: at() }] }])
  await applyFacts(w.deps, [{ ...noFacts(), keyFingerprints: [
    { minionId: 'new-1', act: 'pend', fingerprint: 'aa:bb' },
    // Read while web-01 was pending: not the accepted key Saltdeck knows, so not stored.
    { minionId: 'web-01', act: 'pend', fingerprint: 'cc:dd' },
    // Not a key Saltdeck knows: no row is made for it.
    { minionId: 'ghost', act: 'pend', fingerprint: 'ee:ff' },
  ] }])
  const keys = async () => (await call(w, 'GET', '/api/keys', { who: 'viewer' })).body
  expect(await keys()).toMatchObject({ accepted: ['web-01'], pending: ['new-1'], rejected: [], denied: [], fingerprints: { 'new-1': 'aa:bb' } })
  expect(await keysWithoutFingerprint(w.deps)).toEqual(['web-01'])
  expect((await call(w, 'GET', '/api/minions/new-1', { who: 'viewer' })).body).toMatchObject({ key_state: 'pending', key_fingerprint: 'aa:bb' })
  expect((await call(w, 'GET', '/api/minions/web-01', { who: 'viewer' })).body.key_fingerprint).toBeNull()
  expect((await call(w, 'GET', '/api/minions/ghost')).status).toBe(404)
  // Accepting moves the same key: the fingerprint stays.
  await applyFacts(w.deps, [{ ...noFacts(), keys: [{ minionId: 'new-1', act: 'accept', ts: at() }] }])
  expect((await keys()).fingerprints).toEqual({ 'new-1': 'aa:bb' })
  // Deleted and offered again: maybe another key, so the old fingerprint goes until the poller reads the new one.
  await applyFacts(w.deps, [{ ...noFacts(), keys: [{ minionId: 'new-1', act: 'delete', ts: at() }, { minionId: 'new-1', act: 'pend', ts: at() }] }])
  expect((await keys()).fingerprints).toEqual({})
  expect(await keysWithoutFingerprint(w.deps)).toEqual(['new-1', 'web-01'])
})

test('keys: ids that are property names of plain objects keep their own fingerprints', async () => {
  const w = await testWorld()
  const ids = ['__proto__', 'constructor', 'toString']
  await applyFacts(w.deps, [{ ...noFacts(), keys: ids.map((minionId) => ({ minionId, act: 'pend' as const, ts: w.clock.now() })) }])
  await applyFacts(w.deps, [{ ...noFacts(), keyFingerprints: ids.map((minionId, i) => ({ minionId, act: 'pend' as const, fingerprint: `0${i}:ff` })) }])
  const r = await call(w, 'GET', '/api/keys')
  expect(r.status).toBe(200)
  expect(r.body.pending).toEqual(['__proto__', 'constructor', 'toString'])
  // JSON.parse keeps "__proto__" as an own key, so this reads what the server sent.
  expect(ids.map((id) => [Object.prototype.hasOwnProperty.call(r.body.fingerprints, id), r.body.fingerprints[id]])).toEqual([[true, '00:ff'], [true, '01:ff'], [true, '02:ff']])
})

test('inventory status: one refresh at a time, progress, last finished', async () => {
  const w = await testWorld()
  expect((await call(w, 'GET', '/api/inventory/status')).body).toEqual({ running: false, current: null, last: null })
  const r = (await startRefresh(w.deps, '*'))!
  expect(r.started_at).toBe('2026-11-21T08:00:00.000Z')
  expect(await startRefresh(w.deps, '*')).toBeNull()
  await progressRefresh(w.deps, r.refresh_id, { asked: 200, answered: 198, stored: 297000 })
  const s = (await call(w, 'GET', '/api/inventory/status')).body
  expect(s).toMatchObject({ running: true, current: { refresh_id: r.refresh_id, minions_asked: 200, minions_answered: 198, packages_stored: 297000, finished_at: null }, last: null })
  w.clock.advance(30_000)
  await finishRefresh(w.deps, r.refresh_id, 'salt-api unavailable')
  const f = (await call(w, 'GET', '/api/inventory/status')).body
  expect(f).toMatchObject({ running: false, current: null, last: { refresh_id: r.refresh_id, finished_at: '2026-11-21T08:00:30.000Z', error: 'salt-api unavailable' } })
  expect(await startRefresh(w.deps, 'web*')).not.toBeNull()
})
