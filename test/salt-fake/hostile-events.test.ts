// Contract §17, "events from minions are claims, not facts", through the real stream reader and the runtime against the
// fake salt-api: what a minion can put on the master's bus (event.fire_master) is stored only when salt vouches for it.
import { afterEach, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld, known } from '../helpers/salt-world'
import { until } from '../helpers/until'
import { confirmHeldReturns } from '../../src/pollers/confirm'
import { trustStats } from '../../src/features/jobs/trust'
import { HOLD_MS } from '../../src/salt/frames'
import { sql } from '../../src/db/sql'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w && (await w.close()))

const failed = { 'test_|-x_|-x_|-fail_without_changes': { result: false, changes: {}, comment: 'Failure!', __run_num__: 0 } }
const healthy = { 'test_|-x_|-x_|-succeed_without_changes': { result: true, changes: {}, comment: 'Success!', __run_num__: 0 } }
const metric = async (line: RegExp) => Number(line.exec(String((await call(w, "GET", "/metrics")).body))?.[1] ?? NaN)

/** A world with the stream connected. */
async function streaming() {
  w = await saltWorld()
  await call(w, 'PUT', '/api/admin/settings/pollers', { body: { event_stream_enabled: true } })
  await until(() => w.salt.streamCount === 1, 'the stream connected')
}
/** Waits until the stream has stored something after what was sent (a marker event, stored last). */
async function settled() {
  const jid = `2026112100000000${String(Math.floor(Math.random() * 9000) + 1000)}`
  w.salt.publish(`salt/job/${jid}/new`, { jid, fun: 'test.ping', tgt: 'web-02', tgt_type: 'glob', user: 'root', arg: [], minions: ['web-02'] })
  await until(async () => (await w.get(`/api/activity?jid=${jid}`)).total === 1, 'the marker stored')
}
const runsOf = async (m: string) => (await w.get(`/api/minions/${m}/runs`)).runs as any[]

test('a forged return (no publish to that minion), a bad jid and a forged publish are not stored; a published return is', async () => {
  await streaming()
  const forged = '20261126999999999901'
  // From web-02, as web-01's failed state.apply: a job no publish sent to web-01.
  w.salt.publish(`salt/job/${forged}/ret/web-01`, { id: 'web-01', jid: forged, fun: 'state.apply', retcode: 2, success: false, return: failed })
  // A publish a minion fired in one piece (event.fire_master with a preload): salt fires its whole request, `cmd` and all.
  const fake = '20261126999999999902'
  w.salt.publish(`salt/job/${fake}/new`, { id: 'web-02', cmd: '_minion_event', tag: `salt/job/${fake}/new`, data: {}, jid: fake, fun: 'state.apply', minions: ['db-01'], tgt: 'db-01' })
  w.salt.publish(`salt/job/${fake}/ret/db-01`, { id: 'db-01', jid: fake, fun: 'state.apply', retcode: 0, success: true, return: healthy })
  // A jid carrying markdown, and a return whose tag and sender disagree.
  const md = '20261126999999999999 @channel ![x](http://evil.example/x.png) [Click to re-authenticate](http://evil.example/)'
  w.salt.publish(`salt/job/${md}/ret/web-01`, { id: 'web-01', jid: md, fun: 'state.apply', retcode: 0, return: healthy })
  w.salt.publish(`salt/job/${forged}/ret/db-01`, { id: 'web-02', cmd: '_minion_event', jid: forged, fun: 'state.apply', retcode: 0, return: healthy })
  // A real publish to web-02 and its return.
  const real = '20261126140000000001'
  w.salt.publish(`salt/job/${real}/new`, { jid: real, fun: 'state.apply', tgt: 'web-02', tgt_type: 'glob', user: 'root', arg: [], minions: ['web-02'] })
  w.salt.publish(`salt/job/${real}/ret/web-02`, { cmd: '_return', id: 'web-02', jid: real, fun: 'state.apply', retcode: 0, success: true, return: healthy })
  await until(async () => (await runsOf('web-02')).length === 1, 'the real run stored')
  await settled()
  expect(await runsOf('web-01')).toEqual([])
  expect(await runsOf('db-01')).toEqual([])
  const jobs = (await w.get('/api/jobs?limit=100')).jobs.map((j: any) => j.jid)
  expect(jobs).not.toContain(forged)
  expect(jobs).not.toContain(fake)
  expect((await w.get('/api/activity?limit=500')).events.filter((e: any) => e.jid !== null && ![real].includes(e.jid) && e.fun !== 'test.ping')).toEqual([])
  expect(await w.deps.db.row(sql`SELECT count(*) AS n FROM job_returns WHERE jid != ${real}`)).toEqual({ n: 0 })
  expect(trustStats(w.deps)).toMatchObject({ held: 2, refused: { jid: 1, forged: 2 } })
  expect(await metric(/^saltdeck_salt_events_refused_total\{reason="forged"\} (\d+)$/m)).toBe(2)
  expect(await metric(/^saltdeck_salt_events_refused_total\{reason="jid"\} (\d+)$/m)).toBe(1)
  expect(await metric(/^saltdeck_salt_returns_held (\d+)$/m)).toBe(2)
  // The job cache knows neither held return: each try finds nothing, and after the last one they are dropped.
  for (let i = 0; i < 8; i++) {
    w.clock.advance(300_000)
    await confirmHeldReturns(w.deps, w.rt.client)
  }
  expect(w.salt.calls.filter((c) => c.fun === 'jobs.list_job').length).toBeGreaterThanOrEqual(2)
  expect(trustStats(w.deps)).toMatchObject({ held: 0, refused: { unconfirmed: 2 } })
  expect(await runsOf('web-01')).toEqual([])
  expect(await runsOf('db-01')).toEqual([])
})

test("a minion's own schedule (no publish) is stored once the job cache confirms it, and what is stored is the cache's copy", async () => {
  await streaming()
  const jid = w.salt.scheduleReturn('web-01', 'state.apply', healthy)
  // A second claim for the same job, as if from db-01 which the cache has no return of, and a forged failure for web-01.
  w.salt.publish(`salt/job/${jid}/ret/db-01`, { id: 'db-01', jid, fun: 'state.apply', schedule: 'demo-schedule', retcode: 0, return: healthy })
  await settled()
  expect(await runsOf('web-01')).toEqual([])
  expect(trustStats(w.deps).held).toBe(2)
  // Nothing is due before its first try.
  expect(await confirmHeldReturns(w.deps, w.rt.client)).toBe(0)
  // The cache's copy differs from what the bus claimed: the cache wins.
  w.salt.jobs.get(jid)!.returns['web-01'] = failed
  w.clock.advance(2_000)
  expect(await confirmHeldReturns(w.deps, w.rt.client)).toBe(1)
  expect((await runsOf('web-01'))[0]).toMatchObject({ jid, status: 'unhealthy' })
  expect((await w.get(`/api/jobs/${jid}`))).toMatchObject({ user: 'schedule', target: 'web-01' })
  expect(await runsOf('db-01')).toEqual([])
  expect(trustStats(w.deps)).toMatchObject({ held: 1, confirmedTotal: 1 })
  expect(await metric(/^saltdeck_salt_returns_confirmed_total (\d+)$/m)).toBe(1)
})

test('salt/auth and salt/presence/* are hints: a keys or presence tick, never a minion, a key, an alert or a presence change', async () => {
  await streaming()
  await w.rt.scheduler.run('keys')
  await w.rt.scheduler.run('presence')
  expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'pending', kind: 'key_pending' } })).status).toBe(201)
  const keyLists = () => w.salt.calls.filter((c) => c.fun === 'key.list_all').length
  const before = keyLists()
  w.salt.publish('salt/auth', { act: 'pend', id: 'ghost-99', result: true, pub: 'x' })
  w.salt.publish('salt/auth', { act: 'pend', id: 'ghost-98', result: true, pub: 'x' })
  w.salt.publish('salt/presence/change', { new: [], lost: ['web-01'] })
  w.salt.publish('salt/minion/ghost-97/start', { id: 'ghost-97', cmd: '_minion_event' })
  await settled()
  // One keys tick for the burst, which finds salt's real key list.
  await until(() => keyLists() === before + 1, 'a keys tick')
  await Bun.sleep(1200)
  expect(keyLists()).toBe(before + 1)
  const ids = (await w.get('/api/minions?limit=100')).minions.map((m: any) => m.id)
  expect(ids.sort()).toEqual(['db-01', 'web-01', 'web-02'])
  expect((await w.get('/api/keys')).pending).toEqual([])
  expect((await w.get('/api/alerts')).alerts).toEqual([])
  expect((await w.get('/api/minions/web-01')).online).toBe(true)
  expect(await metric(/^saltdeck_salt_event_hints_total\{hint="keys"\} (\d+)$/m)).toBe(2)
  expect(await metric(/^saltdeck_salt_event_hints_total\{hint="presence"\} (\d+)$/m)).toBe(2)
})

test('a minion start is recorded for a known minion only, and changes no presence', async () => {
  await streaming()
  await known(w, 'web-01')
  w.salt.publish('salt/minion/web-01/start', { id: 'web-01', cmd: '_minion_event' })
  w.salt.publish('salt/minion/ghost-97/start', { id: 'ghost-97', cmd: '_minion_event' })
  // The tag names web-02, the sender (`id`) is web-01: forged.
  w.salt.publish('salt/minion/web-02/start', { id: 'web-01', cmd: '_minion_event' })
  await settled()
  expect((await w.get('/api/activity?event_type=minion.start')).events.map((e: any) => e.minion_id)).toEqual(['web-01'])
  expect((await w.get('/api/minions/ghost-97')).detail).toBe('Minion not found')
  expect((await w.get('/api/minions/web-01')).online).toBe(false)
  expect(trustStats(w.deps).refused.forged).toBe(1)
})

/** One event as rest_cherrypy writes it: the tag raw, then the JSON of {tag, data}. */
const frame = (tag: string, data: Record<string, unknown>) => `tag: ${tag}\ndata: ${JSON.stringify({ data, tag })}\n\n`
const stamp = '2026-11-26T14:02:18.333373+00:00'
/** A tag that writes a frame of its own into the stream (salt's bus takes \r\n\r\n in a tag; rest_cherrypy prints it raw). */
const injecting = `a\r\n\r\n${frame('salt/key', { act: 'pend', id: 'inj-01', _stamp: stamp }).replaceAll('\n', '\r\n')}tag: zz`

test('a tag with CR/LF cannot write frames into the stream: the injected frames are taken back, the carrier dropped, both counted', async () => {
  await streaming()
  w.salt.sendRaw(frame(injecting, { id: 'web-02', cmd: '_minion_event', x: 1, _stamp: stamp }))
  // The same, with the carrier arriving in a second chunk a little later (salt-api writes the tag and data lines apart).
  const text = frame(injecting.replace('inj-01', 'inj-02'), { id: 'web-02', x: 1, _stamp: stamp })
  const cut = text.lastIndexOf('data: {')
  w.salt.sendRaw(text.slice(0, cut))
  await Bun.sleep(HOLD_MS / 3)
  w.salt.sendRaw(text.slice(cut))
  // Frames that are not salt's: the tag line and the JSON tag disagree, data without _stamp, not JSON.
  w.salt.sendRaw(`tag: salt/key\ndata: ${JSON.stringify({ tag: 'salt/kez', data: { act: 'pend', id: 'inj-03', _stamp: stamp } })}\n\n`)
  w.salt.sendRaw(`tag: salt/key\ndata: ${JSON.stringify({ tag: 'salt/key', data: { act: 'pend', id: 'inj-04' } })}\n\n`)
  w.salt.sendRaw('tag: salt/key\ndata: {"tag": "salt/key", "data": \n\n')
  // A real key event after all of it still arrives.
  w.salt.publish('salt/key', { act: 'pend', id: 'real-01', result: true })
  await until(async () => (await w.get('/api/keys')).pending.length > 0, 'the real key event')
  await settled()
  expect((await w.get('/api/keys')).pending).toEqual(['real-01'])
  expect(w.rt.stream.refused).toEqual({ frame: 5, injected: 2 })
  expect(await metric(/^saltdeck_salt_events_refused_total\{reason="injected"\} (\d+)$/m)).toBe(2)
  expect(await metric(/^saltdeck_salt_events_refused_total\{reason="frame"\} (\d+)$/m)).toBe(5)
})

test('hints in a loop cannot drive a poller faster than one tick per 5 s (HINT_MIN_GAP_MS)', async () => {
  await streaming()
  const keyLists = () => w.salt.calls.filter((c) => c.fun === 'key.list_all').length
  const before = keyLists()
  w.salt.publish('salt/auth', { act: 'pend', id: 'ghost-99', result: true })
  await until(() => keyLists() === before + 1, 'the first keys tick')
  for (let i = 0; i < 5; i++) {
    w.salt.publish('salt/auth', { act: 'pend', id: `ghost-${i}`, result: true })
    await Bun.sleep(300)
  }
  // 3 s after the first tick: without the gap the burst's own tick (1 s after its first hint) would have run.
  await Bun.sleep(1500)
  expect(keyLists()).toBe(before + 1)
  await until(() => keyLists() === before + 2, 'the second keys tick', { ms: 5000 })
  await Bun.sleep(1500)
  expect(keyLists()).toBe(before + 2)
}, 15_000)
