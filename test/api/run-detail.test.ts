// Contract §13: per-state detail stored compactly, dry runs, diffs, fleet health over time and the failing states;
// and the §5 poller defaults with the migration that keeps an existing install's values.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { migrateBefore } from '../helpers/migrations'
import { normalize } from '../../src/salt/normalize'
import { applyFacts } from '../../src/features/ingest/apply'
import { notePublished } from '../../src/features/jobs/trust'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { sql } from '../../src/db/sql'
import { runDetails, stateIdents, stateTexts } from '../../src/db/schema'

type World = Awaited<ReturnType<typeof testWorld>>
const DAY = 86_400_000
let seq = 0
/** A state: its key parts, result, changes, comment and run order. */
const st = (id: string, result: boolean | null, order: number, opts: { changes?: object; comment?: string; sls?: string; fun?: string } = {}) => [
  `${(opts.fun ?? 'test.succeed_without_changes').split('.')[0]}_|-${id}_|-${id}_|-${(opts.fun ?? 'test.succeed_without_changes').split('.')[1]}`,
  { name: id, result, changes: opts.changes ?? {}, comment: opts.comment ?? (result === false ? 'Failure!' : 'Success!'), __sls__: opts.sls ?? 'demo', __run_num__: order, __id__: id, duration: 1.4 },
] as const
/** Stores one minion's return of state.apply through the ingest path, at the world clock's time; returns its jid. */
async function ret(w: World, minion: string, ret: unknown, opts: { args?: unknown[]; at?: number } = {}) {
  const at = opts.at ?? w.clock.now()
  const jid = new Date(at).toISOString().replace(/\D/g, '').slice(0, 17) + String(seq++ % 1000).padStart(3, '0')
  const stamp = new Date(at).toISOString().replace('Z', '')
  // Published to that minion, so its return from the bus is believed (contract §17).
  notePublished(w.deps, jid, 'state.apply', [minion])
  await applyFacts(w.deps, [normalize(`salt/job/${jid}/ret/${minion}`, { id: minion, jid, fun: 'state.apply', fun_args: opts.args ?? [], retcode: 0, _stamp: stamp, return: ret }, w.clock.now())])
  return jid
}
const get = async (w: World, path: string) => (await call(w, 'GET', path)).body

describe('state detail', () => {
  test("states come back in Salt's order with their fields; identities and comments are stored once", async () => {
    const w = await testWorld()
    const states = Object.fromEntries([st('b-second', false, 1), st('a-first', true, 0, { changes: { diff: '--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n' }, fun: 'file.managed', comment: 'File updated' }), st('c-third', null, 2)])
    const j1 = await ret(w, 'web-01', states)
    const j2 = await ret(w, 'web-02', states)
    const r = await get(w, `/api/minions/web-01/runs/${j1}`)
    expect(r).toMatchObject({ minion_id: 'web-01', jid: j1, status: 'unhealthy', test: false, sls: ['demo'], errors: null, detail_pruned: false })
    expect(r.states.map((s: any) => [s.order, s.id, s.function, s.result, s.changed])).toEqual([[0, 'a-first', 'file.managed', true, true], [1, 'b-second', 'test.succeed_without_changes', false, false], [2, 'c-third', 'test.succeed_without_changes', null, false]])
    expect(r.states[0]).toMatchObject({ key: 'file_|-a-first_|-a-first_|-managed', sls: 'demo', name: 'a-first', comment: 'File updated', duration_ms: 1, changes: { diff: '--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n' } })
    expect((await get(w, `/api/minions/web-02/runs/${j2}`)).states).toEqual(r.states)
    const c = w.deps.db
    expect((await c.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${stateIdents}`))!.n).toBe(3)
    expect((await c.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${stateTexts}`))!.n).toBe(3)
    // One row per run, four u32 per state.
    expect((await c.row<{ n: number }>(sql`SELECT length(${runDetails.states}) AS n FROM ${runDetails} LIMIT 1`))!.n).toBe(3 * 16)
  })
  test('a state whose id, name and comment hold a NUL is stored and read back (PostgreSQL text holds none: U+FFFD)', async () => {
    const w = await testWorld()
    const jid = await ret(w, 'web-01', Object.fromEntries([st('bad\u0000id', false, 0, { comment: 'broke\u0000here' }), st('fine', true, 1)]))
    const r = await get(w, `/api/minions/web-01/runs/${jid}`)
    const nul = w.deps.db.engine === 'postgres' ? '\uFFFD' : '\u0000'
    expect(r.states.map((s: any) => [s.id, s.name, s.comment, s.result])).toEqual([[`bad${nul}id`, `bad${nul}id`, `broke${nul}here`, false], ['fine', 'fine', 'Success!', true]])
  })
  test('a render error is a run whose detail is its errors', async () => {
    const w = await testWorld()
    const jid = await ret(w, 'web-01', ["Rendering SLS 'base:broken' failed: Jinja variable 'undefined_thing' is undefined"])
    expect(await get(w, `/api/minions/web-01/runs/${jid}`)).toMatchObject({ status: 'unhealthy', states: null, errors: ["Rendering SLS 'base:broken' failed: Jinja variable 'undefined_thing' is undefined"], detail_pruned: false })
  })
  test('only the newest SALTDECK_RUN_DETAIL_KEEP runs keep their detail; older ones keep their counts', async () => {
    const w = await testWorld({ runDetailKeep: 2 })
    const jids: string[] = []
    for (const i of [0, 1, 2]) {
      w.clock.advance(60_000)
      jids.push(await ret(w, 'web-01', Object.fromEntries([st('a', true, 0), st('b', i !== 1, 1)])))
    }
    const oldest = await get(w, `/api/minions/web-01/runs/${jids[0]}`)
    expect(oldest).toMatchObject({ states: null, errors: null, detail_pruned: true, pass_count: 2, total_count: 2 })
    for (const j of jids.slice(1)) expect((await get(w, `/api/minions/web-01/runs/${j}`)).states).toHaveLength(2)
    expect((await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${runDetails}`))!.n).toBe(2)
  })
  test('an unknown run is 404 Run not found', async () => {
    const w = await testWorld()
    const r = await call(w, 'GET', '/api/minions/web-01/runs/20261121080000000000')
    expect(r).toMatchObject({ status: 404, body: { detail: 'Run not found' } })
  })
})

describe('dry runs', () => {
  test.each([[['demo', 'test=True']], [['demo', { test: true }]], [[{ test: 'true', __kwarg__: true }]]])('%j is a dry run: marked, never the last run, not in the summary or the trend', async (args) => {
    const w = await testWorld()
    await ret(w, 'web-01', Object.fromEntries([st('a', true, 0)]))
    const before = { summary: await get(w, '/api/runs/summary'), trend: await get(w, '/api/runs/trend?days=1') }
    w.clock.advance(60_000)
    const dry = await ret(w, 'web-01', Object.fromEntries([st('a', null, 0, { comment: 'would change' }), st('b', false, 1)]), { args })
    expect(await get(w, `/api/minions/web-01/runs/${dry}`)).toMatchObject({ test: true, status: 'unhealthy' })
    expect((await get(w, '/api/minions/web-01')).last_run.status).toBe('healthy')
    expect(await get(w, '/api/runs/summary')).toEqual(before.summary)
    expect(await get(w, '/api/runs/trend?days=1')).toEqual(before.trend)
    expect((await get(w, '/api/runs/failing-states')).items).toEqual([])
    expect((await get(w, '/api/minions/web-01/runs?test=true')).runs.map((r: any) => r.jid)).toEqual([dry])
    expect((await get(w, '/api/minions/web-01/runs?test=false')).total).toBe(1)
    expect((await get(w, '/api/minions/web-01/runs')).total).toBe(2)
  })
  test('test=False is a real run', async () => {
    const w = await testWorld()
    const j = await ret(w, 'web-01', Object.fromEntries([st('a', true, 0)]), { args: ['demo', 'test=False'] })
    expect((await get(w, `/api/minions/web-01/runs/${j}`)).test).toBe(false)
  })
})

describe('diff', () => {
  test('lists the states whose outcome differs and those in one run only, against previous, last_good or a jid', async () => {
    const w = await testWorld()
    const good = await ret(w, 'web-01', Object.fromEntries([st('a', true, 0), st('b', true, 1)]))
    w.clock.advance(60_000)
    const bad = await ret(w, 'web-01', Object.fromEntries([st('a', true, 0), st('b', false, 1), st('gone', true, 2)]))
    w.clock.advance(60_000)
    const dry = await ret(w, 'web-01', Object.fromEntries([st('a', null, 0)]), { args: ['test=True'] })
    w.clock.advance(60_000)
    const last = await ret(w, 'web-01', Object.fromEntries([st('a', true, 0, { changes: { x: 1 } }), st('b', false, 1), st('new', true, 2)]))
    const prev = await get(w, `/api/minions/web-01/runs/${last}/diff?against=previous`)
    expect(prev.from.jid).toBe(dry)
    expect(prev.to.jid).toBe(last)
    const d = await get(w, `/api/minions/web-01/runs/${last}/diff`)
    expect(d.from.jid).toBe(dry)
    const lg = await get(w, `/api/minions/web-01/runs/${last}/diff?against=last_good`)
    expect(lg.from.jid).toBe(good)
    expect(lg.states).toEqual([
      { key: 'test_|-a_|-a_|-succeed_without_changes', id: 'a', sls: 'demo', before: { result: true, changed: false }, after: { result: true, changed: true } },
      { key: 'test_|-b_|-b_|-succeed_without_changes', id: 'b', sls: 'demo', before: { result: true, changed: false }, after: { result: false, changed: false } },
      { key: 'test_|-new_|-new_|-succeed_without_changes', id: 'new', sls: 'demo', before: null, after: { result: true, changed: false } },
    ])
    const byJid = await get(w, `/api/minions/web-01/runs/${last}/diff?against=${bad}`)
    expect(byJid.states.map((s: any) => [s.id, s.before, s.after])).toEqual([
      ['a', { result: true, changed: false }, { result: true, changed: true }], ['new', null, { result: true, changed: false }], ['gone', { result: true, changed: false }, null],
    ])
    expect((await call(w, 'GET', `/api/minions/web-01/runs/${good}/diff?against=previous`))).toMatchObject({ status: 404, body: { detail: 'Run not found' } })
  })
})

describe('fleet health over time', () => {
  test('the trend holds one point per day as it stood at its end; a backfilled run corrects the days from its own until the next run', async () => {
    const w = await testWorld()
    const d0 = Date.parse('2026-11-18T12:00:00Z')
    w.clock.t = Date.parse('2026-11-21T08:00:00Z')
    await ret(w, 'm1', Object.fromEntries([st('a', true, 0)]), { at: d0 })
    await ret(w, 'm1', Object.fromEntries([st('a', false, 0)]), { at: d0 + 2 * DAY })
    const pick = (t: any) => t.points.map((p: any) => [p.day, p.healthy, p.changed, p.unhealthy])
    expect(pick(await get(w, '/api/runs/trend?days=4'))).toEqual([['2026-11-18', 1, 0, 0], ['2026-11-19', 1, 0, 0], ['2026-11-20', 0, 0, 1], ['2026-11-21', 0, 0, 1]])
    // Backfilled later: m2 changed on the 19th; m1 failed on the 19th too (its run of the 20th still decides from then).
    await ret(w, 'm2', Object.fromEntries([st('a', true, 0, { changes: { y: 1 } })]), { at: d0 + DAY })
    await ret(w, 'm1', Object.fromEntries([st('a', false, 0)]), { at: d0 + DAY + 3600_000 })
    expect(pick(await get(w, '/api/runs/trend?days=4'))).toEqual([['2026-11-18', 1, 0, 0], ['2026-11-19', 0, 1, 1], ['2026-11-20', 0, 1, 1], ['2026-11-21', 0, 1, 1]])
    expect((await get(w, '/api/runs/trend')).points).toHaveLength(30)
    expect((await call(w, 'GET', '/api/runs/trend?days=366')).status).toBe(422)
  })
  test('the summary counts accepted minions by their last real run, and those that never ran', async () => {
    const w = await testWorld()
    await applyFacts(w.deps, [{ ...normalize('salt/key', { act: 'accept', id: 'idle-01', result: true }, w.clock.now()) }])
    for (const m of ['web-01', 'web-02', 'db-01']) await applyFacts(w.deps, [normalize('salt/key', { act: 'accept', id: m, result: true }, w.clock.now())])
    await ret(w, 'web-01', Object.fromEntries([st('a', true, 0)]))
    await ret(w, 'web-02', Object.fromEntries([st('a', true, 0, { changes: { z: 1 } })]))
    await ret(w, 'db-01', Object.fromEntries([st('a', false, 0)]))
    expect(await get(w, '/api/runs/summary')).toEqual({ minions: 4, by_status: { healthy: 1, changed: 1, unhealthy: 1, blocked: 0, never: 1 } })
  })
  test('failing states: most minions first, with a sample comment; a later passing run of the same state files clears it', async () => {
    const w = await testWorld()
    for (const m of ['web-01', 'web-02']) await ret(w, m, Object.fromEntries([st('db-migrate', false, 0, { comment: `<b>${m}</b> failed` }), st('ok', true, 1)]))
    await ret(w, 'db-01', Object.fromEntries([st('cert', false, 0, { sls: 'tls', comment: 'expired' })]))
    const items = (await get(w, '/api/runs/failing-states')).items
    expect(items.map((i: any) => [i.id, i.sls, i.function, i.minion_count])).toEqual([['db-migrate', 'demo', 'test.succeed_without_changes', 2], ['cert', 'tls', 'test.succeed_without_changes', 1]])
    expect(items[0].sample_comment).toMatch(/^<b>web-0[12]<\/b> failed$/)
    w.clock.advance(120_000)
    await ret(w, 'web-01', Object.fromEntries([st('db-migrate', true, 0), st('ok', true, 1)]))
    // A run of other state files leaves db-01's failure alone.
    await ret(w, 'db-01', Object.fromEntries([st('other', true, 0, { sls: 'base' })]))
    expect((await get(w, '/api/runs/failing-states')).items.map((i: any) => [i.id, i.minion_count])).toEqual([['db-migrate', 1], ['cert', 1]])
    expect((await get(w, '/api/runs/failing-states?limit=1')).items).toHaveLength(1)
    expect((await get(w, '/api/runs/failing-states?since_minutes=1')).items.map((i: any) => i.id)).toEqual([])
  })
})

describe('pollers on by default (contract §5)', () => {
  test('a fresh install polls jobs and fleet every 300 s, inventory every 360 min after 60 s, and reads the event stream', async () => {
    const w = await testWorld()
    expect((await get(w, '/api/admin/settings')).pollers).toMatchObject({
      event_stream_enabled: true, jobs_poll_interval_seconds: 300, fleet_poll_interval_seconds: 300, inventory_refresh_minutes: 360, inventory_refresh_initial_delay_s: 60,
    })
  })
  test('an install from before keeps the values it ran with: what it stored, and the old defaults for the rest', async () => {
    const db = openDb(':memory:')
    migrateBefore(db, '0012_run_detail')
    db.$client.query("INSERT INTO users (id, username, username_key, password_hash, created_at, updated_at) VALUES ('u1', 'admin', 'admin', 'x', 1, 1)").run()
    db.$client.query("INSERT INTO settings (section, value, updated_at) VALUES ('pollers', '{\"jobs_poll_interval_seconds\":120}', 1)").run()
    await migrate(db)
    expect(JSON.parse(db.$client.query<{ value: string }, []>("SELECT value FROM settings WHERE section = 'pollers'").get()!.value)).toEqual({
      jobs_poll_interval_seconds: 120, fleet_poll_interval_seconds: 0, inventory_refresh_minutes: 0, inventory_refresh_initial_delay_s: 30, event_stream_enabled: false,
    })
  })
})
