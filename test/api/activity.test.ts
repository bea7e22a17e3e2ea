// Proves the activity feed (job events once through the ingest, others always), pruning, and GET /api/activity's filters, order, paging, counts and hiding per contract §6.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, testWorld, type Who } from '../helpers/app'
import { indexActivity, pruneEvents, recordEvents, type EventInput, type EventOut } from '../../src/features/activity/service'
import { addPermission, createRole } from '../../src/features/roles/service'
import { createUser } from '../../src/features/users/service'
import { createSession } from '../../src/features/auth/service'
import { applyFacts } from '../../src/features/ingest/apply'
import { noFacts, type SaltFacts } from '../../src/salt/facts'
import { sql } from '../../src/db/sql'
import { activityEvents } from '../../src/db/schema'
import { TEST_ENGINE } from '../helpers/migrations'

/** SQLite's search index is a second file (search.db) an indexer fills; PostgreSQL's pg_trgm index is part of the table. */
const SEPARATE_INDEX = TEST_ENGINE === 'sqlite'

type World = Awaited<ReturnType<typeof testWorld>>
type Query = Record<string, string>
const MIN = 60_000
const DAY = 86_400_000
const FIELDS = ['id', 'ts', 'category', 'event_type', 'minion_id', 'jid', 'fun', 'success', 'changed', 'initiator', 'target', 'duration_ms', 'summary', 'source']
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A user whose only role grants (view, key:*); returns its bearer token. */
async function keyOnlyUser(w: World) {
  const role = await createRole(w.deps, 'key-watcher', 'sees keys only')
  await addPermission(w.deps, role.id, 'view', 'key:*')
  const u = await createUser(w.deps, { username: 'keys', password: 'password-123', must_change_pw: false, roles: [role.id] })
  return (await createSession(w.deps, u.id)).token
}

const J1 = '20261121071000000001'
const J2 = '20261121073000000002'
const J3 = '20261121075000000003'
const J4 = '20261121074000000004'
/** The feed used by the filter tests; `ago` is minutes before the clock's now. */
const FEED: (Omit<EventInput, 'ts'> & { ago: number })[] = [
  { ago: 50, category: 'job', event_type: 'job.new', jid: J1, fun: 'state.apply', target: 'web*', initiator: 'alice', summary: 'state.apply dispatched to web* (2 minions)' },
  { ago: 49, category: 'job', event_type: 'job.ret', jid: J1, minion_id: 'web-01', fun: 'state.apply', success: true, changed: true, duration_ms: 75.9, initiator: 'alice', target: 'web*', summary: 'web-01 returned state.apply: 2 ok, 0 failed, 1 changed' },
  { ago: 49, category: 'job', event_type: 'job.ret', jid: J1, minion_id: 'web-02', fun: 'state.apply', success: true, changed: false, duration_ms: 109, initiator: 'alice', target: 'web*', summary: 'web-02 returned state.apply: 2 ok, 0 failed, 0 changed' },
  { ago: 30, category: 'job', event_type: 'job.ret', jid: J2, minion_id: 'db-01', fun: 'state.apply', success: false, changed: false, duration_ms: 97, initiator: 'alice', target: 'db-01', summary: 'db-01 returned state.apply: 2 ok, 1 failed, 0 changed' },
  { ago: 10, category: 'job', event_type: 'job.new', jid: J3, fun: 'test.ping', target: '*', initiator: 'Bob_Admin', summary: 'test.ping dispatched to * (3 minions)' },
  { ago: 10, category: 'job', event_type: 'job.ret', jid: J3, minion_id: 'web-01', fun: 'test.ping', success: true, changed: null, initiator: 'Bob_Admin', target: '*', summary: 'web-01 returned test.ping' },
  { ago: 120, category: 'key', event_type: 'key.pend', minion_id: 'new_host', summary: 'new_host key pending' },
  { ago: 60, category: 'key', event_type: 'key.accept', minion_id: 'new_host', initiator: 'alice', summary: 'new_host key accepted' },
  { ago: 5, category: 'minion', event_type: 'minion.start', minion_id: 'web-01', summary: 'web-01 started' },
  { ago: 1, category: 'minion', event_type: 'minion.offline', minion_id: 'db-01', summary: 'db-01 went offline' },
  { ago: 20, category: 'job', event_type: 'job.ret', jid: J4, minion_id: 'cache-01', fun: 'pkg.list_pkgs', success: true, changed: null, initiator: 'ops%team', target: 'cache-01', summary: 'cache-01 returned pkg.list_pkgs' },
  { ago: 3 * 24 * 60, category: 'job', event_type: 'job.new', jid: '20261118080000000000', fun: 'test.ping', target: '*', summary: 'test.ping dispatched to * (3 minions)' },
  { ago: 8 * 24 * 60, category: 'key', event_type: 'key.delete', minion_id: 'gone-01', summary: 'gone-01 key deleted' },
]

/** A world holding FEED, with the stored events as recordEvents returned them. */
async function feedWorld() {
  const w = await testWorld()
  const now = w.clock.now()
  const stored = await recordEvents(w.deps, FEED.map(({ ago, ...e }) => ({ ...e, ts: now - ago * MIN })))
  expect(stored.length).toBe(FEED.length)
  return { w, stored }
}

/** The contract §6 filters, computed independently over the stored events. */
function oracle(all: EventOut[], q: Query, now: number, visible = ['job', 'key', 'minion']) {
  const asked = [...(q.category ? [q.category] : []), ...(q.categories ? q.categories.split(',').map((s) => s.trim()) : [])]
  const cats = asked.length ? visible.filter((c) => asked.includes(c)) : visible
  const s = q.search?.toLowerCase()
  const yes = (v?: string) => v !== undefined && ['true', '1', 'yes', 'on'].includes(v.toLowerCase())
  return all
    .filter((e) => cats.includes(e.category))
    .filter((e) => !q.since_minutes || Date.parse(e.ts) >= now - Number(q.since_minutes) * MIN)
    .filter((e) => (!q.event_type || e.event_type === q.event_type) && (!q.minion_id || e.minion_id === q.minion_id) && (!q.minion || !!e.minion_id?.includes(q.minion)) && (!q.jid || e.jid === q.jid))
    .filter((e) => !s || [e.summary, e.minion_id, e.fun, e.initiator, e.target].some((v) => v?.toLowerCase().includes(s)))
    .filter((e) => !yes(q.hide_dispatch) || e.event_type !== 'job.new')
    .filter((e) => !yes(q.hide_routine) || !(e.event_type === 'job.ret' && e.success === true && e.changed !== true))
    .filter((e) => q.success === undefined || e.success === yes(q.success))
    .sort((a, b) => Date.parse(b.ts) - Date.parse(a.ts) || b.id - a.id)
}

const list = (w: World, q: Query = {}, who: Who = 'viewer') =>
  call(w, 'GET', `/api/activity?${new URLSearchParams(q)}`, { who })
const summaries = (body: any) => body.events.map((e: EventOut) => e.summary)

describe('recordEvents', () => {
  test('stores a batch and returns every event with its id and API shape', async () => {
    const { w, stored } = await feedWorld()
    expect(stored.map((e) => e.id)).toEqual([...stored.map((e) => e.id)].sort((a, b) => a - b))
    expect(new Set(stored.map((e) => e.id)).size).toBe(FEED.length)
    expect(stored[1]).toMatchObject({ event_type: 'job.ret', minion_id: 'web-01', duration_ms: 76, success: true, changed: true })
    expect(stored[6]).toMatchObject({ event_type: 'key.pend', jid: null, fun: null, success: null, changed: null, target: null, duration_ms: null, initiator: null })
    expect((await list(w)).body.total).toBe(FEED.length)
  })

  test('an event type not named under its category is a bug, refused before anything is stored', async () => {
    const w = await testWorld()
    await expect(recordEvents(w.deps, [
      { ts: w.clock.now(), category: 'minion', event_type: 'minion.start', minion_id: 'a', summary: 'a started' },
      { ts: w.clock.now(), category: 'key', event_type: 'minion.start', minion_id: 'b', summary: 'b started' },
    ])).rejects.toThrow('event type minion.start is not of category key')
    expect((await call(w, 'GET', '/api/activity')).body.total).toBe(0)
  })

  test('an empty batch stores nothing', async () => {
    const w = await testWorld()
    expect(await recordEvents(w.deps, [])).toEqual([])
    expect((await list(w)).body).toEqual({ total: 0, events: [] })
  })

  // Job events are de-duplicated by the ingest, through the keys of the job and the return they report.
  const retIntent = (minionId: string, ts: number, jid = J1, summaryFun = 'test.ping'): SaltFacts => ({
    ...noFacts(), returns: [{ jid, minionId, fun: summaryFun, ret: true, retcode: 0, success: true, ts, stampMs: ts }],
  })
  const newIntent = (jid: string, ts: number): SaltFacts => ({
    ...noFacts(), jobs: [{ jid, fun: 'test.ping', target: '*', tgtType: 'glob', user: 'root', arg: [], minions: [], startedAt: ts, ts }],
  })

  test('a job event repeated in the same batch or a later batch is ignored, not an error', async () => {
    const w = await testWorld()
    const ts = w.clock.now()
    const first = await applyFacts(w.deps, [retIntent('web-01', ts), retIntent('web-01', ts + 5, J1, 'test.version'), retIntent('web-02', ts)])
    expect(first.map((e) => e.minion_id)).toEqual(['web-01', 'web-02'])
    expect(first[0]!.summary).toBe('web-01 returned test.ping')
    // The poller backfills the same returns later, plus one the stream missed.
    const later = await applyFacts(w.deps, [retIntent('web-02', ts + 9, J1, 'backfilled'), retIntent('db-01', ts), retIntent('web-01', ts + 9, J1, 'backfilled')])
    expect(later.map((e) => e.minion_id)).toEqual(['db-01'])
    const r = await list(w)
    expect(r.body.total).toBe(3)
    expect(r.body.events.map((e: EventOut) => e.minion_id).sort()).toEqual(['db-01', 'web-01', 'web-02'])
    expect(summaries(r.body).join()).not.toContain('backfilled')
    expect(summaries(r.body).join()).not.toContain('version')
  })

  test('job events differing in event_type, jid or minion_id are all kept', async () => {
    const w = await testWorld()
    const ts = w.clock.now()
    const stored = await applyFacts(w.deps, [newIntent(J1, ts), retIntent('web-01', ts), retIntent('web-01', ts, J2), retIntent('web-02', ts), newIntent(J2, ts), newIntent(J1, ts)])
    expect(stored.map((e) => `${e.event_type} ${e.jid} ${e.minion_id}`).sort()).toEqual([
      `job.new ${J1} null`, `job.new ${J2} null`, `job.ret ${J1} web-01`, `job.ret ${J1} web-02`, `job.ret ${J2} web-01`,
    ])
    expect((await list(w)).body.total).toBe(5)
    // Seen again later (the jobs poller, a stream replay): nothing new.
    expect(await applyFacts(w.deps, [newIntent(J2, ts), retIntent('web-02', ts)])).toEqual([])
    expect((await list(w)).body.total).toBe(5)
  })

  test('non-job events are never de-duplicated', async () => {
    const w = await testWorld()
    const ts = w.clock.now()
    const key: EventInput = { ts, category: 'key', event_type: 'key.accept', minion_id: 'web-01', summary: 'web-01 key accepted' }
    const start: EventInput = { ts, category: 'minion', event_type: 'minion.start', minion_id: 'web-01', summary: 'web-01 started' }
    expect((await recordEvents(w.deps, [key, key, start, start])).length).toBe(4)
    expect((await recordEvents(w.deps, [key, start])).length).toBe(2)
    expect((await list(w)).body.total).toBe(6)
    expect((await list(w, { category: 'key' })).body.total).toBe(3)
  })
})

describe('pruneEvents', () => {
  test('removes events older than the retention and returns how many went; totals follow', async () => {
    const { w, stored } = await feedWorld()
    const keyUser = await keyOnlyUser(w)
    const now = w.clock.now()
    const check = async (remaining: EventOut[]) => {
      // Unfiltered, category-only and filtered totals all agree with the rows left, before and after paging.
      const queries: Query[] = [{}, { category: 'key' }, { categories: 'job,minion' }, { search: 'dispatched' }, { limit: '1' }, { limit: '2', offset: '3' }]
      for (const q of queries) {
        const want = oracle(remaining, q, now)
        const r = await list(w, q)
        expect(r.body.total).toBe(want.length)
        expect(r.body.events.map((e: EventOut) => e.id)).toEqual(want.slice(Number(q.offset ?? 0), Number(q.offset ?? 0) + Number(q.limit ?? 100)).map((e) => e.id))
      }
      expect((await list(w, {}, { token: keyUser })).body.total).toBe(remaining.filter((e) => e.category === 'key').length)
    }
    await check(stored)
    expect(await pruneEvents(w.deps, 7)).toBe(1)
    await check(stored.filter((e) => e.summary !== 'gone-01 key deleted'))
    expect(await pruneEvents(w.deps, 7)).toBe(0)
    expect(await pruneEvents(w.deps, 1)).toBe(1)
    const recent = stored.filter((e) => Date.parse(e.ts) >= now - DAY)
    expect(recent.length).toBe(FEED.length - 2)
    await check(recent)
    // (Moving the clock two days on would expire the sessions; a zero-day retention empties the past instead.)
    expect(await pruneEvents(w.deps, 0)).toBe(recent.length)
    await check([])
    expect((await list(w)).body).toEqual({ total: 0, events: [] })
  })

  test('keeps an event exactly at the cutoff', async () => {
    const w = await testWorld()
    const now = w.clock.now()
    await recordEvents(w.deps, [
      { ts: now - DAY, category: 'minion', event_type: 'minion.start', minion_id: 'a', summary: 'a started' },
      { ts: now - DAY - 1, category: 'minion', event_type: 'minion.start', minion_id: 'b', summary: 'b started' },
    ])
    expect(await pruneEvents(w.deps, 1)).toBe(1)
    expect(summaries((await list(w)).body)).toEqual(['a started'])
  })
})

describe('GET /api/activity', () => {
  let w: World
  let stored: EventOut[]
  let now: number
  beforeAll(async () => {
    ;({ w, stored } = await feedWorld())
    now = w.clock.now()
  })

  const QUERIES: Query[] = [
    {},
    { since_minutes: '60' }, { since_minutes: '1' }, { since_minutes: '10080' },
    { limit: '3' }, { limit: '3', offset: '3' }, { offset: '12' }, { offset: '50' },
    { category: 'job' }, { category: 'key' }, { category: 'minion' }, { category: 'nonsense' },
    { categories: 'key,minion' }, { categories: ' job , key ' }, { categories: 'minion,nonsense' },
    { event_type: 'job.ret' }, { event_type: 'key.accept' }, { event_type: 'job' },
    { minion_id: 'web-01' }, { minion_id: 'web' }, { jid: J1 }, { jid: J3 },
    { minion: 'web' }, { minion: 'WEB' }, { minion: '-01' }, { minion: 'new_' }, { minion: '%' }, { minion: '_' }, { minion: 'web\u0000' }, { minion: "'" },
    { minion: 'web', category: 'minion' }, { minion: 'db', minion_id: 'web-01' },
    { search: 'WEB-01' }, { search: 'alice' }, { search: 'ALICE' }, { search: 'bob_admin' }, { search: 'dispatched' }, { search: 'cache-01' },
    { search: '%' }, { search: '_' }, { search: 'list%pkgs' }, { search: 'web_01' }, { search: 'ops%t' }, { search: '\\' }, { search: 'state.apply: 2 ok' },
    // User text never becomes FTS5 syntax: a NUL, quotes, operators and brackets are plain characters to match.
    { search: 'ab\u0000' }, { search: 'web\u0000-01' }, { search: '"web' }, { search: 'web"-01' }, { search: 'NEAR(web' }, { search: 'web* OR db' },
    { search: 'web AND db' }, { search: '(web)' }, { search: 'web-01)' }, { search: '{col}: x' }, { search: '^web' },
    { hide_dispatch: 'true' }, { hide_dispatch: 'false' }, { hide_routine: 'true' }, { hide_routine: '1' }, { hide_dispatch: 'yes', hide_routine: 'on' },
    { category: 'job', hide_routine: 'true', search: 'state.apply' },
    { success: 'true' }, { success: 'false' }, { success: '0' }, { success: 'false', search: 'failed' }, { success: 'true', category: 'key' },
    { since_minutes: '30', categories: 'job,minion', hide_dispatch: 'true', limit: '2', offset: '1' },
    { minion_id: 'web-01', category: 'minion' }, { jid: J1, event_type: 'job.ret', search: 'WEB-02' },
  ]
  test.each(QUERIES.map((q) => [new URLSearchParams(q).toString() || '(no filter)', q] as const))('%s: matches the independent filter, order and total', async (_label, q) => {
    const want = oracle(stored, q, now)
    const off = Number(q.offset ?? 0)
    const r = await list(w, q)
    expect(r.status).toBe(200)
    expect(r.body.total).toBe(want.length)
    expect(r.body.events).toEqual(want.slice(off, off + Number(q.limit ?? 100)))
  })

  // Literal answers read off FEED, so the oracle itself is checked.
  const LITERAL: [Query, string[]][] = [
    [{ search: '%' }, ['cache-01 returned pkg.list_pkgs']],
    [{ search: '_' }, ['web-01 returned test.ping', 'test.ping dispatched to * (3 minions)', 'cache-01 returned pkg.list_pkgs', 'new_host key accepted', 'new_host key pending']],
    [{ search: 'web_01' }, []],
    [{ search: 'list%pkgs' }, []],
    [{ search: 'WEB-01' }, ['web-01 started', 'web-01 returned test.ping', 'web-01 returned state.apply: 2 ok, 0 failed, 1 changed']],
    [{ since_minutes: '60', category: 'key' }, ['new_host key accepted']],
    [{ category: 'job', hide_dispatch: 'true', hide_routine: 'true' }, ['db-01 returned state.apply: 2 ok, 1 failed, 0 changed', 'web-01 returned state.apply: 2 ok, 0 failed, 1 changed']],
    [{ minion: 'web-0' }, ['web-01 started', 'web-01 returned test.ping', 'web-02 returned state.apply: 2 ok, 0 failed, 0 changed', 'web-01 returned state.apply: 2 ok, 0 failed, 1 changed']],
    [{ minion: 'new_h' }, ['new_host key accepted', 'new_host key pending']],
    // Searching "failed" also finds "0 failed"; the success filter finds the failures only.
    [{ search: 'failed' }, ['db-01 returned state.apply: 2 ok, 1 failed, 0 changed', 'web-02 returned state.apply: 2 ok, 0 failed, 0 changed', 'web-01 returned state.apply: 2 ok, 0 failed, 1 changed']],
    [{ success: 'false' }, ['db-01 returned state.apply: 2 ok, 1 failed, 0 changed']],
    [{ minion: 'New' }, []],
    [{ jid: J1 }, ['web-02 returned state.apply: 2 ok, 0 failed, 0 changed', 'web-01 returned state.apply: 2 ok, 0 failed, 1 changed', 'state.apply dispatched to web* (2 minions)']],
  ]
  test.each(LITERAL.map(([q, want]) => [new URLSearchParams(q).toString(), q, want] as const))('%s lists exactly the expected events', async (_label, q, want) => {
    const r = await list(w, q)
    expect(summaries(r.body)).toEqual(want)
    expect(r.body.total).toBe(want.length)
  })

  test('orders ts descending, then id descending', async () => {
    const r = await list(w)
    const ev: EventOut[] = r.body.events
    for (let i = 1; i < ev.length; i++) {
      const [a, b] = [ev[i - 1]!, ev[i]!]
      expect(Date.parse(a.ts) > Date.parse(b.ts) || (a.ts === b.ts && a.id > b.id)).toBe(true)
    }
    // The two returns of J1 share a timestamp: the later-stored (web-02) comes first.
    const tied = ev.filter((e) => e.jid === J1 && e.event_type === 'job.ret').map((e) => e.minion_id)
    expect(tied).toEqual(['web-02', 'web-01'])
  })

  test('every event has the full record shape', async () => {
    const r = await list(w)
    for (const e of r.body.events) {
      expect(Object.keys(e).sort()).toEqual([...FIELDS].sort())
      expect(e.ts).toMatch(ISO_MS)
      expect(typeof e.id).toBe('number')
      for (const f of ['category', 'event_type', 'summary']) expect(typeof e[f]).toBe('string')
    }
    const pend = r.body.events.find((e: EventOut) => e.event_type === 'key.pend')
    expect(pend).toEqual({
      id: pend.id, ts: new Date(now - 120 * MIN).toISOString(), category: 'key', event_type: 'key.pend', minion_id: 'new_host',
      jid: null, fun: null, success: null, changed: null, initiator: null, target: null, duration_ms: null, summary: 'new_host key pending', source: 'default',
    })
  })

  describe('visibility', () => {
    test('admin, operator and viewer see every category', async () => {
      for (const who of ['admin', 'operator', 'viewer'] as const) {
        const r = await list(w, {}, who)
        expect(r.body.total).toBe(FEED.length)
        expect(new Set(r.body.events.map((e: EventOut) => e.category))).toEqual(new Set(['job', 'key', 'minion']))
      }
    })

    test('a role with only (view, key:*) sees only key events, whatever it asks for', async () => {
      const token = await keyOnlyUser(w)
      const keys = oracle(stored, {}, now, ['key'])
      expect(keys.length).toBe(3)
      const cases: [Query, EventOut[]][] = [
        [{}, keys],
        [{ limit: '1' }, keys],
        [{ category: 'job' }, []],
        [{ categories: 'job,key' }, keys],
        [{ minion_id: 'web-01' }, []],
        [{ search: 'new_host' }, oracle(stored, { search: 'new_host' }, now, ['key'])],
        [{ hide_dispatch: 'true' }, keys],
      ]
      for (const [q, want] of cases) {
        const r = await list(w, q, { token })
        expect(r.status).toBe(200)
        expect(r.body.total).toBe(want.length)
        expect(r.body.events).toEqual(want.slice(0, Number(q.limit ?? 100)))
      }
    })

    test('a user with no roles gets 200 with nothing', async () => {
      for (const q of [{}, { category: 'job' }, { search: 'web' }] as Query[]) {
        const r = await list(w, q, 'nobody')
        expect(r.status).toBe(200)
        expect(r.body).toEqual({ total: 0, events: [] })
      }
    })

    test('no session is 401', async () => {
      expect(await list(w, {}, 'anon')).toMatchObject({ status: 401, body: { detail: 'Not authenticated' } })
    })
  })

  const INVALID: [Query, string, string][] = [
    [{ since_minutes: '0' }, 'since_minutes', 'greater_than_equal'],
    [{ since_minutes: '10081' }, 'since_minutes', 'less_than_equal'],
    [{ limit: '0' }, 'limit', 'greater_than_equal'],
    [{ limit: '501' }, 'limit', 'less_than_equal'],
    [{ offset: '-1' }, 'offset', 'greater_than_equal'],
    [{ search: 'x'.repeat(201) }, 'search', 'string_too_long'],
    [{ minion: 'x'.repeat(256) }, 'minion', 'string_too_long'],
    [{ hide_routine: 'maybe' }, 'hide_routine', 'bool_parsing'],
    [{ success: 'failed' }, 'success', 'bool_parsing'],
  ]
  test.each(INVALID.map(([q, f, t]) => [new URLSearchParams(q).toString().slice(0, 40), q, f, t] as const))('%s is a 422', async (_label, q, field, type) => {
    const r = await list(w, q)
    expect(r.status).toBe(422)
    expect(r.body.detail).toEqual([expect.objectContaining({ loc: ['query', field], type })])
  })
})

describe('GET /api/activity paging defaults', () => {
  test('limit defaults to 100 and total counts every event', async () => {
    const w = await testWorld()
    const now = w.clock.now()
    await recordEvents(w.deps, Array.from({ length: 120 }, (_, i) => ({ ts: now - i * 1000, category: 'minion', event_type: 'minion.start', minion_id: `m${i}`, summary: `m${i} started` })))
    const r = await list(w)
    expect(r.body.total).toBe(120)
    expect(r.body.events.length).toBe(100)
    expect(r.body.events[0].minion_id).toBe('m0')
    expect(r.body.events[99].minion_id).toBe('m99')
    const last = await list(w, { limit: '500', offset: '100' })
    expect(last.body.events.map((e: EventOut) => e.minion_id)).toEqual(Array.from({ length: 20 }, (_, i) => `m${100 + i}`))
  })
})

describe('hide_routine with an unknown success flag', () => {
  test('a job.ret whose success is unknown (null) is not routine and stays visible', async () => {
    const w = await testWorld()
    const ts = w.clock.now()
    // A return backfilled from jobs.lookup_jid carries neither retcode nor success.
    await recordEvents(w.deps, [
      { ts, category: 'job', event_type: 'job.ret', jid: J1, minion_id: 'web-01', fun: 'state.apply', success: null, changed: null, summary: 'web-01 returned state.apply' },
      { ts, category: 'job', event_type: 'job.ret', jid: J1, minion_id: 'web-02', fun: 'state.apply', success: true, changed: false, summary: 'web-02 returned state.apply' },
    ])
    const r = await list(w, { hide_routine: 'true' })
    expect(summaries(r.body)).toEqual(['web-01 returned state.apply'])
    expect(r.body.total).toBe(1)
  })
})

test('an event of an unknown category is refused, so counter totals cannot drift', async () => {
  const w = await testWorld()
  await expect(recordEvents(w.deps, [{ ts: w.clock.now(), category: 'audit', event_type: 'x', summary: 'x' }])).rejects.toThrow('unknown activity category')
  expect((await call(w, 'GET', '/api/activity')).body.total).toBe(0)
})

describe('search through the trigram index', () => {
  test('case folding (ASCII letters, the same before and after indexing), quotes, short terms and pruning', async () => {
    const w = await testWorld()
    const t = w.clock.now()
    await recordEvents(w.deps, [
      { ts: t - 40 * 86_400_000, category: 'minion', event_type: 'minion.start', minion_id: 'old-büro', summary: 'old-büro started' },
      { ts: t, category: 'minion', event_type: 'minion.start', minion_id: 'Büro-01', summary: 'Büro-01 started' },
      { ts: t, category: 'job', event_type: 'job.new', jid: '1', fun: 'cmd.run', target: 'say "hi"', summary: 'cmd.run dispatched to say "hi" (1 minion)' },
    ])
    const ids = async (q: string) => (await call(w, 'GET', `/api/activity?search=${encodeURIComponent(q)}`)).body.events.map((e: any) => e.summary)
    // Not yet indexed: the tail is scanned, so results are complete before the indexer runs.
    expect(await ids('cmd.RUN')).toEqual(['cmd.run dispatched to say "hi" (1 minion)'])
    const folding = async () => [await ids('bÜRO-0'), await ids('BüRO-0'), (await ids('büro')).length]
    const before = await folding()
    expect(before).toEqual([[], ['Büro-01 started'], 2])
    expect(await indexActivity(w.deps)).toBe(3)
    expect(await indexActivity(w.deps)).toBe(0)
    // The index narrows the rows (it folds Ü to ü); LIKE decides, so indexing changes no answer.
    expect(await folding()).toEqual(before)
    expect(await ids('"hi"')).toEqual(['cmd.run dispatched to say "hi" (1 minion)'])
    expect(await ids('hi')).toEqual(['cmd.run dispatched to say "hi" (1 minion)'])
    expect(await ids('nothing-like-this')).toEqual([])
    const inIndex = () => (SEPARATE_INDEX ? w.deps.db.$client.query("SELECT count(*) AS n FROM search.activity_fts WHERE activity_fts MATCH '\"old-b\"'").get() : null)
    await pruneEvents(w.deps, 30)
    // A pruned row still in the index never comes back from a search; the next sync removes it.
    if (SEPARATE_INDEX) expect(inIndex()).toEqual({ n: 1 })
    expect(await ids('büro')).toEqual(['Büro-01 started'])
    expect(await indexActivity(w.deps)).toBe(0)
    if (SEPARATE_INDEX) expect(inIndex()).toEqual({ n: 0 })
    expect(await ids('büro')).toEqual(['Büro-01 started'])
  })

  // search.db's own state: PostgreSQL has no index apart from the table to be ahead of it.
  test.skipIf(!SEPARATE_INDEX)('an index ahead of the database (a restored backup) is rebuilt from the events', async () => {
    const w = await testWorld()
    const db = w.deps.db.$client
    await recordEvents(w.deps, [{ ts: w.clock.now(), category: 'minion', event_type: 'minion.start', minion_id: 'alpha-01', summary: 'alpha-01 started' }])
    expect(await indexActivity(w.deps)).toBe(1)
    // As if the index had seen ids 2..500 of another copy, one of them matching "ghost".
    db.exec("INSERT INTO search.activity_fts (rowid, summary, minion_id, fun, initiator, target) VALUES (2, 'ghost-01 started', 'ghost-01', NULL, NULL, NULL)")
    db.exec('UPDATE search.search_state SET watermark = 500')
    expect(await indexActivity(w.deps)).toBe(1)
    expect(db.query('SELECT watermark FROM search.search_state').get()).toEqual({ watermark: 1 })
    expect(db.query("SELECT count(*) AS n FROM search.activity_fts WHERE activity_fts MATCH '\"ghost\"'").get()).toEqual({ n: 0 })
    expect((await call(w, 'GET', '/api/activity?search=alpha')).body.total).toBe(1)
  })
})

describe('kept totals and newest-first pages agree with a recount', () => {
  /** Deterministic pseudo-random events: dense and rare terms, routine and not, all three categories, ts out of id order. */
  function events(n: number, seed: number, now: number, era = 'new-era'): EventInput[] {
    let x = seed
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648)
    return Array.from({ length: n }, (_, i) => {
      const r = rnd()
      const minion = r < 0.1 ? `web-${i % 7}` : r < 0.102 ? 'rare-db' : `host-${i % 13}`
      const cat = r < 0.8 ? 'job' : r < 0.9 ? 'minion' : 'key'
      const type = cat === 'job' ? (rnd() < 0.85 ? 'job.ret' : 'job.new') : cat === 'minion' ? 'minion.start' : 'key.accept'
      return {
        // Mostly in arrival order, a few late ones: ts order and id order differ.
        ts: now - (n - i) * 1000 + (rnd() < 0.05 ? -Math.floor(rnd() * 600_000) : 0), category: cat, event_type: type, minion_id: minion,
        jid: cat === 'job' ? String(20260000000000000000n + BigInt(i)) : null, fun: cat === 'job' ? 'state.apply' : null,
        success: type === 'job.ret' ? rnd() < 0.9 : null, changed: type === 'job.ret' ? rnd() < 0.3 : null, summary: `${minion} ${type}${r > 0.6 ? ` ${era}` : ''}`,
      }
    })
  }
  const FILTERS: Query[] = [
    { search: 'web' }, { search: 'WEB-1' }, { search: 'rare' }, { search: 'we' }, { hide_routine: 'true' }, { event_type: 'key.accept' },
    { categories: 'job,key' }, { search: 'web', hide_routine: 'true' }, { event_type: 'job.ret', search: 'host-1' }, { search: 'rare', categories: 'job' },
    // Common among old events only: a short walk over the newest finds too few, and the page must come from the rest.
    { search: 'old-era' },
    // Time windows, which slide as the clock moves between the rounds below.
    { since_minutes: '90' }, { since_minutes: '120', search: 'web' }, { since_minutes: '60', hide_routine: 'true' },
  ]
  /** What the list must say, computed in JS from every stored event. */
  function oracle(w: World, all: any[], q: Query, offset: number, limit: number) {
    const term = q.search?.toLowerCase()
    const cats = q.categories?.split(',')
    const from = q.since_minutes ? w.clock.now() - Number(q.since_minutes) * MIN : -Infinity
    const hit = all.filter((e) => e.ts >= from && (!term || [e.summary, e.minion_id, e.fun, e.initiator, e.target].some((v) => v?.toLowerCase().includes(term)))
      && (!q.hide_routine || !(e.event_type === 'job.ret' && e.success === 1 && e.changed === 0))
      && (!q.event_type || e.event_type === q.event_type) && (!cats || cats.includes(e.category)))
    hit.sort((a, b) => b.ts - a.ts || b.id - a.id)
    return { total: hit.length, ids: hit.slice(offset, offset + limit).map((e) => e.id) }
  }
  async function agree(w: World) {
    // Every stored event, read once per check (the list's answers are compared with it, nothing writes meanwhile).
    const all = await w.deps.db.rows<any>(sql`SELECT * FROM ${activityEvents}`)
    for (const q of FILTERS) {
      for (const [offset, limit] of [[0, 100], [0, 5], [40, 20], [500, 100], [5000, 10]] as const) {
        const got = await call(w, 'GET', `/api/activity?${new URLSearchParams({ ...q, offset: String(offset), limit: String(limit) })}`)
        expect(got.status).toBe(200)
        expect({ q, offset, total: got.body.total, ids: got.body.events.map((e: EventOut) => e.id) }).toEqual({ q, offset, ...oracle(w, all, q, offset, limit) })
      }
    }
  }
  test('as events arrive, after indexing and after retention', async () => {
    const w = await testWorld()
    const now = w.clock.now()
    await recordEvents(w.deps, events(4000, 7, now - 40 * DAY + 4000_000, 'old-era'))
    await recordEvents(w.deps, events(1000, 9, now - 10 * DAY, 'old-era'))
    await recordEvents(w.deps, events(3000, 11, now))
    await agree(w)
    // More events after the totals were kept: only those are counted, the totals must still be exact.
    await recordEvents(w.deps, events(500, 13, now + 1000))
    w.clock.advance(7 * MIN)
    await agree(w)
    await indexActivity(w.deps, 100_000)
    await recordEvents(w.deps, events(300, 17, now + 2000))
    w.clock.advance(25 * MIN)
    await agree(w)
    // The clock set back: a window that moved backwards is counted afresh.
    w.clock.advance(-20 * MIN)
    await agree(w)
    // Retention removes the old half: every kept total is forgotten and recounted.
    expect(await pruneEvents(w.deps, 30)).toBeGreaterThan(3500)
    await agree(w)
  }, 90_000) // 8,800 events and ~200 list calls: PostgreSQL's round trips take it to 20-25 s on a loaded machine
})
