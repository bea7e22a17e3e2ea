// Proves recordRun stores a state run once per (minion, jid) with the contract §7 completed_at, and GET /api/minions/{id}/runs orders, filters and pages them.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { returnsOf } from '../helpers/fixtures'
import { recordRun, type RawRun } from '../../src/features/runs/service'
import { parseStamp, parseStartTime } from '../../src/lib/salt-time'

type World = Awaited<ReturnType<typeof testWorld>>

const T0 = Date.parse('2026-11-21T08:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A state-result dict with `ok` passing, `fail` failing and `changed` changing states (changes on passing states first). */
function stateRet(ok: number, fail = 0, changed = 0, duration = 10) {
  const out: Record<string, unknown> = {}
  for (let i = 0; i < ok + fail; i++)
    out[`test_|-s${i}_|-s${i}_|-nop`] = { result: i < ok, changes: i < changed ? { diff: 'x' } : {}, duration, __run_num__: i }
  return out
}
const RETS = {
  healthy: stateRet(2),
  changed: stateRet(2, 0, 1),
  unhealthy: stateRet(1, 1),
  blocked: ['The function "state.apply" is running as PID 1 and was started at 2026, Nov 21 08:00:00.000000 with jid 1'],
} as const

/** Records a run with a stamp, defaulting the function to state.apply. */
const rec = async (w: World, minionId: string, jid: string, ret: unknown, stampMs: number | null = T0, extra: Partial<RawRun> = {}) =>
  (await recordRun(w.deps, { minionId, jid, fun: 'state.apply', ret, stampMs, ...extra })) !== null
const runs = (w: World, minion: string, qs = '', who: 'viewer' | 'admin' = 'viewer') => call(w, 'GET', `/api/minions/${minion}/runs${qs}`, { who })

describe('recordRun', () => {
  test('stores a run once per (minion, jid); a second return for the pair is ignored', async () => {
    const w = await testWorld()
    expect(await rec(w, 'web-01', '20261121080007853917', RETS.changed)).toBe(true)
    expect(await rec(w, 'web-01', '20261121080007853917', RETS.unhealthy, T0 + 5000)).toBe(false)
    const r = await runs(w, 'web-01')
    expect(r.status).toBe(200)
    expect(r.body.total).toBe(1)
    expect(r.body.runs[0]).toMatchObject({ status: 'changed', fail_count: 0, completed_at: iso(T0) })
  })

  test('the same jid on another minion is another run', async () => {
    const w = await testWorld()
    expect(await rec(w, 'web-01', '20261121080007853917', RETS.healthy)).toBe(true)
    expect(await rec(w, 'web-02', '20261121080007853917', RETS.healthy)).toBe(true)
    expect((await runs(w, 'web-01')).body.total).toBe(1)
    expect((await runs(w, 'web-02')).body.total).toBe(1)
  })

  test('the real state.apply returns land with their counts, status and stamps', async () => {
    const w = await testWorld()
    const rets = returnsOf('local-state.apply.json')
    // `_stamp` of each minion's salt/job/20261121080007853917/ret event in events.sse.
    const stamps: Record<string, string> = { 'web-02': '2026-11-21T08:00:09.162805', 'web-01': '2026-11-21T08:00:09.181889', 'db-01': '2026-11-21T08:00:09.195878' }
    for (const [m, ret] of Object.entries(rets)) expect(await rec(w, m, '20261121080007853917', ret, parseStamp(stamps[m], w.clock.now()))).toBe(true)
    const want = {
      'web-01': { pass_count: 2, fail_count: 0, change_count: 1, total_count: 2, duration_ms: 76, blocked: false, status: 'changed', completed_at: '2026-11-21T08:00:09.181Z' },
      'web-02': { pass_count: 2, fail_count: 0, change_count: 1, total_count: 2, duration_ms: 109, blocked: false, status: 'changed', completed_at: '2026-11-21T08:00:09.162Z' },
      'db-01': { pass_count: 2, fail_count: 1, change_count: 1, total_count: 3, duration_ms: 97, blocked: false, status: 'unhealthy', completed_at: '2026-11-21T08:00:09.195Z' },
    }
    for (const [m, fields] of Object.entries(want)) {
      const r = await runs(w, m)
      expect(r.body).toMatchObject({ minion_id: m, total: 1 })
      const run = r.body.runs[0]
      expect(Object.keys(run).sort()).toEqual(
        ['blocked', 'change_count', 'completed_at', 'duration_ms', 'fail_count', 'fun', 'id', 'jid', 'pass_count', 'sls', 'source', 'status', 'test', 'total_count'],
      )
      expect(run).toEqual({ id: run.id, jid: '20261121080007853917', fun: 'state.apply', test: false, sls: ['demo'], source: 'default', ...fields })
      expect(run.id).toMatch(UUID)
    }
  })

  test('render errors and refusals are stored, not dropped', async () => {
    const w = await testWorld()
    const broken = returnsOf('local-state.sls-broken.json')['web-02']
    const refused = returnsOf('local-state.apply-blocked.json')['web-01']
    const down = returnsOf('local-state.apply-one-down.json')['db-01']
    expect(await rec(w, 'web-02', '20261121080009479916', broken, null, { fun: 'state.sls' })).toBe(true)
    expect(await rec(w, 'web-01', '20261121080023108897', refused)).toBe(true)
    expect(await rec(w, 'db-01', '20261121080100000000', down)).toBe(true)
    expect((await runs(w, 'web-02')).body.runs[0]).toMatchObject({ fun: 'state.sls', status: 'unhealthy', fail_count: 1, total_count: 1, pass_count: 0, blocked: false })
    for (const m of ['web-01', 'db-01'])
      expect((await runs(w, m)).body.runs[0]).toMatchObject({ status: 'blocked', blocked: true, pass_count: 0, fail_count: 0, change_count: 0, total_count: 0 })
  })

  // Job 20261121080007853917 started at `2026, Nov 21 08:00:07.853917`; db-01's run lasted 97 ms.
  const start = parseStartTime('2026, Nov 21 08:00:07.853917')!
  const dbRet = () => returnsOf('local-state.apply.json')['db-01']
  test.each([
    ['the _stamp when present', { stampMs: Date.parse('2026-11-21T08:00:09.195Z'), jobStartMs: start }, '2026-11-21T08:00:09.195Z'],
    ['job start + duration without a stamp', { stampMs: null, jobStartMs: start }, '2026-11-21T08:00:07.950Z'],
    ['job start + duration when the stamp is undefined', { jobStartMs: start }, '2026-11-21T08:00:07.950Z'],
    ['the time of receipt with neither', { stampMs: null, jobStartMs: null }, '2026-11-21T08:00:00.000Z'],
  ] as const)('completed_at is %s', async (_label, times, want) => {
    const w = await testWorld()
    await recordRun(w.deps, { minionId: 'db-01', jid: '20261121080007853917', fun: 'state.apply', ret: dbRet(), ...times })
    expect((await runs(w, 'db-01')).body.runs[0].completed_at).toBe(want)
  })
})

describe('GET /api/minions/{minion_id}/runs', () => {
  /** A world with seven runs on web-01, scrambled on insert, plus one on web-02. */
  async function seeded() {
    const w = await testWorld()
    const rows: [string, keyof typeof RETS, number][] = [
      ['20261121080000000003', 'healthy', T0 + 3000],
      ['20261121080000000001', 'changed', T0 + 1000],
      ['20261121080000000007', 'unhealthy', T0 + 3000], // same completed_at as ...03: jid breaks the tie
      ['20261121080000000005', 'blocked', T0 + 5000],
      ['20261121080000000002', 'changed', T0 + 7000], // late-finishing older job
      ['20261121080000000004', 'unhealthy', T0 + 4000],
      ['20261121080000000006', 'healthy', T0 + 3000],
    ]
    for (const [jid, kind, at] of rows) expect(await rec(w, 'web-01', jid, RETS[kind], at)).toBe(true)
    await rec(w, 'web-02', '20261121080000000099', RETS.healthy, T0 + 9000)
    const ordered = [...rows].sort((a, b) => b[2] - a[2] || (a[0] < b[0] ? 1 : -1)).map(([jid, kind]) => ({ jid, status: kind }))
    return { w, ordered }
  }
  const brief = (body: any) => body.runs.map((r: any) => ({ jid: r.jid, status: r.status }))

  test('orders by completed_at descending, then jid descending', async () => {
    const { w, ordered } = await seeded()
    const r = await runs(w, 'web-01')
    expect(r.status).toBe(200)
    expect(r.body.total).toBe(7)
    expect(brief(r.body)).toEqual(ordered)
    expect(r.body.runs.map((x: any) => x.jid)).toEqual([
      '20261121080000000002', '20261121080000000005', '20261121080000000004',
      '20261121080000000007', '20261121080000000006', '20261121080000000003', '20261121080000000001',
    ])
  })

  test('limit and offset page through the same order; total counts every run', async () => {
    const { w, ordered } = await seeded()
    const pages = []
    for (let off = 0; off < 8; off += 3) {
      const r = await runs(w, 'web-01', `?limit=3&offset=${off}`)
      expect(r.body.total).toBe(7)
      expect(r.body.runs.length).toBe(Math.min(3, 7 - off))
      pages.push(...brief(r.body))
    }
    expect(pages).toEqual(ordered)
    const past = await runs(w, 'web-01', '?offset=50')
    expect(past.body).toEqual({ minion_id: 'web-01', total: 7, runs: [] })
  })

  test.each(['healthy', 'changed', 'unhealthy', 'blocked'])('status=%s filters runs and total', async (status) => {
    const { w, ordered } = await seeded()
    const want = ordered.filter((r) => r.status === status)
    const r = await runs(w, 'web-01', `?status=${status}`)
    expect(r.body.total).toBe(want.length)
    expect(brief(r.body)).toEqual(want)
    const page = await runs(w, 'web-01', `?status=${status}&limit=1&offset=1`)
    expect(page.body.total).toBe(want.length)
    expect(brief(page.body)).toEqual(want.slice(1, 2))
  })

  test('default limit is 20 and at most 200 may be asked', async () => {
    const w = await testWorld()
    for (let i = 0; i < 25; i++) await rec(w, 'web-01', `202611210800000000${String(i).padStart(2, '0')}`, RETS.healthy, T0 + i)
    const r = await runs(w, 'web-01')
    expect(r.body.total).toBe(25)
    expect(r.body.runs.length).toBe(20)
    expect(r.body.runs[0].jid).toBe('20261121080000000024')
    expect((await runs(w, 'web-01', '?limit=200')).body.runs.length).toBe(25)
  })

  test.each([
    ['?limit=0', 'limit', 'greater_than_equal'],
    ['?limit=201', 'limit', 'less_than_equal'],
    ['?offset=-1', 'offset', 'greater_than_equal'],
    ['?limit=abc', 'limit', 'int_parsing'],
    ['?status=failed', 'status', 'literal_error'],
  ])('%s is a 422 on %s', async (qs, field, type) => {
    const w = await testWorld()
    const r = await runs(w, 'web-01', qs)
    expect(r.status).toBe(422)
    expect(r.body.detail).toEqual([expect.objectContaining({ loc: ['query', field], type })])
  })

  test('an unknown minion is 200 with total 0', async () => {
    const { w } = await seeded()
    const r = await runs(w, 'no-such-minion')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ minion_id: 'no-such-minion', total: 0, runs: [] })
  })

  test.each([
    ['anon', 401, 'Not authenticated'],
    ['nobody', 403, 'Forbidden'],
  ] as const)('%s gets %i', async (who, status, detail) => {
    const { w } = await seeded()
    const r = await call(w, 'GET', '/api/minions/web-01/runs', { who })
    expect(r).toMatchObject({ status, body: { detail } })
  })
})

describe('minions.last_run', () => {
  const lastRun = async (w: World, id: string) => {
    const r = await call(w, 'GET', `/api/minions/${id}`, { who: 'viewer' })
    expect(r.status).toBe(200)
    return r.body.last_run
  }

  test('is null before any run, then follows the newest run; an older backfilled run does not replace it', async () => {
    const w = await testWorld()
    await rec(w, 'web-01', '20261121080000000001', RETS.healthy, null) // creates the minion with no stamp: completed at receipt
    expect(await lastRun(w, 'web-01')).toEqual({ status: 'healthy', completed_at: iso(T0) })
    await rec(w, 'web-01', '20261121080000000002', RETS.unhealthy, T0 + 60_000)
    expect(await lastRun(w, 'web-01')).toEqual({ status: 'unhealthy', completed_at: iso(T0 + 60_000) })
    await rec(w, 'web-01', '20261121075900000000', RETS.blocked, T0 - 60_000) // backfill of an older job
    expect(await lastRun(w, 'web-01')).toEqual({ status: 'unhealthy', completed_at: iso(T0 + 60_000) })
    await rec(w, 'web-01', '20261121080000000002', RETS.healthy, T0 + 120_000) // duplicate: ignored
    expect(await lastRun(w, 'web-01')).toEqual({ status: 'unhealthy', completed_at: iso(T0 + 60_000) })
  })

  test('shows in the minion list and drives its status filter', async () => {
    const w = await testWorld()
    await rec(w, 'web-01', '20261121080000000001', RETS.changed)
    await rec(w, 'db-01', '20261121080000000001', RETS.unhealthy)
    const all = await call(w, 'GET', '/api/minions', { who: 'viewer' })
    expect(all.body.minions.map((m: any) => [m.id, m.last_run])).toEqual([
      ['db-01', { status: 'unhealthy', completed_at: iso(T0) }],
      ['web-01', { status: 'changed', completed_at: iso(T0) }],
    ])
    const bad = await call(w, 'GET', '/api/minions?status=unhealthy', { who: 'viewer' })
    expect(bad.body.minions.map((m: any) => m.id)).toEqual(['db-01'])
  })

  test('is the head of the runs list even when two runs complete in the same millisecond', async () => {
    const w = await testWorld()
    // The list breaks the tie by jid descending, so ...02 is the latest run; ...01 arrives later (e.g. backfilled).
    await rec(w, 'web-01', '20261121080000000002', RETS.unhealthy, T0 + 1000)
    await rec(w, 'web-01', '20261121080000000001', RETS.healthy, T0 + 1000)
    const head = (await runs(w, 'web-01')).body.runs[0]
    expect(head.jid).toBe('20261121080000000002')
    expect(await lastRun(w, 'web-01')).toEqual({ status: head.status, completed_at: head.completed_at })
  })
})
