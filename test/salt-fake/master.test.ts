// Proves master health and the grace after a master returns (contract §17) against the fake salt-api, whose
// `masterDown` behaves as a real salt-api with its master stopped: GET / answers, every call (login too) hangs.
import { afterEach, describe, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { until } from '../helpers/until'
import { SaltClient } from '../../src/salt/client'
import { SaltUnavailable } from '../../src/salt/errors'
import { watchTime } from '../../src/features/alerts/watch'

let w: Awaited<ReturnType<typeof saltWorld>>
/** A world whose master checks give up after 1 s (long enough for an answering fake on a busy machine). */
const world = async () => {
  const x = await saltWorld()
  x.rt.masterWatch.timeoutMs = 1000
  return x
}
afterEach(async () => w && (await w.close()))

const alertsOf = async (kind: string, state = 'all') => (await w.get(`/api/alerts?state=${state}`)).alerts.filter((a: any) => a.kind === kind)
const rule = async (body: Record<string, unknown>) => expect((await call(w, 'POST', '/api/alerts/rules', { body })).status).toBe(201)
const presence = async () => Object.fromEntries((await w.get('/api/minions')).minions.map((m: any) => [m.id, m.presence]))

describe('master health', () => {
  test('a call that times out while salt-api answers GET / leaves salt-api reachable: the master is the one not answering', async () => {
    w = await world()
    const c = new SaltClient(() => ({ url: w.salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret', verify: true }), { timeoutMs: 200, attempts: 1 })
    await c.login()
    expect(c.reachability().up).toBe(true)
    w.salt.masterDown = true
    const e = (await c.runner('manage.present').catch((x) => x)) as SaltUnavailable
    expect(e).toBeInstanceOf(SaltUnavailable)
    expect(e.reason).toBe('timed out')
    await Bun.sleep(100)
    expect(c.reachability().up).toBe(true)
    expect(await c.masterAnswers(200)).toEqual({ up: false, api: true, error: 'no answer within 0.2 s' })
    w.salt.masterDown = false
    expect(await c.masterAnswers(2000)).toEqual({ up: true })
  })

  test('a 500 through the master is the master\'s only while salt-api answers GET /: a salt-api shutting down (500, then nothing) is not a stopped master', async () => {
    w = await world()
    const creds = (url: string) => () => ({ url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret', verify: true })
    const c = new SaltClient(creds(w.salt.url), { timeoutMs: 1000, attempts: 1 })
    await c.login()
    w.salt.fail500 = 1
    expect(await c.masterAnswers(1000)).toEqual({ up: false, api: true, error: 'salt-api answered HTTP 500' })
    // A salt-api on its way out: its last calls answer 500 and GET / no longer answers.
    const going = Bun.serve({ port: 0, fetch: (req) => (req.method === 'GET' ? new Response('', { status: 503 }) : Response.json({ return: 'An unexpected error occurred' }, { status: 500 })) })
    try {
      const g = new SaltClient(creds(`http://127.0.0.1:${going.port}`), { timeoutMs: 1000, attempts: 1 })
      expect(await g.masterAnswers(1000)).toEqual({ up: false, api: false, error: 'salt-api answered HTTP 500' })
    } finally {
      going.stop(true)
    }
  })

  test('master stopped: Salt health names it (salt-api answers), presence is unknown, a presence tick ends at once, master_unreachable fires after for_minutes and resolves when it answers', async () => {
    w = await world()
    await w.rt.scheduler.run('presence')
    await w.rt.masterWatch.check()
    expect((await w.get('/api/salt/health')).master).toMatchObject({ reachable: true, presence_hold: null })
    await rule({ name: 'master down', kind: 'master_unreachable', params: { for_minutes: 1 } })
    const stoppedAt = w.clock.now()
    w.salt.masterDown = true
    await w.rt.masterWatch.check()
    const h = await w.get('/api/salt/health')
    expect(h.master).toMatchObject({ reachable: false, since: new Date(stoppedAt).toISOString(), error: 'no answer within 1 s', presence_hold: 'down' })
    expect(h.salt_api.reachable).toBe(true)
    expect(h.presence_known).toBe(false)
    expect(h.problems.some((p: string) => p.startsWith('The salt-master does not answer through salt-api'))).toBe(true)
    expect(await presence()).toEqual({ 'db-01': 'unknown', 'web-01': 'unknown', 'web-02': 'unknown' })
    expect(String((await call(w, 'GET', '/metrics')).body)).toContain('\nsaltdeck_salt_master_up{source="default"} 0\n')
    // The presence tick asks nothing of a master known down, and ends at once.
    const hung = w.salt.hung
    const t0 = Date.now()
    await w.rt.scheduler.run('presence')
    expect(Date.now() - t0).toBeLessThan(1000)
    expect(w.salt.hung).toBe(hung)
    w.clock.advance(59_000)
    await watchTime(w.deps)
    expect(await alertsOf('master_unreachable')).toEqual([])
    w.clock.advance(2_000)
    await watchTime(w.deps)
    const [a] = await alertsOf('master_unreachable', 'firing')
    expect(a).toMatchObject({ subject: 'salt-master', state: 'firing' })
    expect(a.summary).toStartWith('salt-master does not answer through salt-api')
    w.salt.masterDown = false
    await w.rt.masterWatch.check()
    expect((await w.get('/api/salt/health')).master).toMatchObject({ reachable: true, presence_hold: 'grace' })
    await watchTime(w.deps)
    expect(await alertsOf('master_unreachable', 'firing')).toEqual([])
    expect(await alertsOf('master_unreachable', 'resolved')).toHaveLength(1)
    const metrics = String((await call(w, 'GET', '/metrics')).body)
    expect(metrics).toContain('\nsaltdeck_salt_master_up{source="default"} 1\n')
    expect(metrics).toContain('\nsaltdeck_presence_held{source="default"} 1\n')
  })
})

test('while the master is down the pollers that ask it skip their ticks (nothing left hanging in salt-api, no poller error); when it answers those asking only the master run at once, those asking minions after the grace', async () => {
  w = await world()
  await w.rt.scheduler.run('keys')
  w.salt.masterDown = true
  await w.rt.masterWatch.check()
  const hung = w.salt.hung
  const calls = w.salt.calls.length
  const t0 = Date.now()
  for (const name of ['keys', 'grains', 'jobs', 'fleet', 'inventory']) await w.rt.scheduler.run(name)
  expect(Date.now() - t0).toBeLessThan(1000)
  expect([w.salt.hung, w.salt.calls.length]).toEqual([hung, calls])
  const run = await call(w, 'POST', '/api/admin/pollers/grains/run')
  expect([run.status, run.body]).toEqual([503, { detail: 'The salt-master does not answer: the grains poller runs once it does' }])
  expect((await w.get('/api/admin/pollers')).pollers.filter((p: any) => p.waiting_for_master).map((p: any) => p.name)).toEqual(['keys', 'grains', 'jobs', 'fleet', 'inventory'])
  expect([w.salt.hung, w.salt.calls.length]).toEqual([hung, calls])
  const metrics = String((await call(w, 'GET', '/metrics')).body)
  expect(metrics).toContain('\nsaltdeck_poller_waiting_for_master{source="default",poller="grains"} 1\n')
  expect(metrics).toContain('\nsaltdeck_poller_waiting_for_master{source="default",poller="presence"} 0\n')
  const h = await w.get('/api/salt/health')
  expect(h.pollers.filter((p: any) => p.last_error !== null || p.late)).toEqual([])
  expect(h.problems.filter((p: string) => p.startsWith('The ') && p.includes(' poller '))).toEqual([])
  // Watching the master as the service does: the answer runs the pollers that skipped and ask only the master (keys,
  // jobs, fleet) at once, and those that ask minions (grains, inventory) when the grace ends: two presence intervals.
  expect((await call(w, 'PUT', '/api/admin/settings/pollers', { body: { minion_state_presence_interval_seconds: 2 } })).status).toBe(200)
  ;(w.rt as any).watchMaster()
  w.salt.masterDown = false
  const back = Date.now()
  await w.rt.masterWatch.check()
  const asked = () => new Set(w.salt.calls.slice(calls).map((c) => c.fun))
  await until(() => (asked().has('key.list_all') && asked().has('jobs.list_jobs')) || null, 'keys and jobs run')
  expect(asked().has('grains.items')).toBe(false)
  expect((await w.get('/api/admin/pollers')).pollers.filter((p: any) => p.waiting_for_master).map((p: any) => p.name)).toEqual(['grains', 'inventory'])
  await until(() => asked().has('grains.items') || null, 'grains run after the grace', { ms: 10_000, every: 50 })
  expect(Date.now() - back).toBeGreaterThanOrEqual(3_900)
  await until(async () => (await w.get('/api/admin/pollers')).pollers.every((p: any) => !p.waiting_for_master && !p.running) || null, 'nothing waiting')
}, 30_000)

test('the presence tick is bounded: a master that stops before Saltdeck sees it holds the tick for the deadline, not the client\'s three 30 s attempts', async () => {
  w = await world()
  w.rt.presenceDeadlineMs = 300
  w.salt.masterDown = true
  const t0 = Date.now()
  await w.rt.scheduler.run('presence')
  expect(Date.now() - t0).toBeLessThan(2000)
  expect(w.salt.hung).toBe(1)
  const p = (await w.get('/api/admin/pollers')).pollers.find((x: any) => x.name === 'presence')
  expect(p).toMatchObject({ running: false, errors: 1, last_error: 'Salt API unavailable' })
})

describe('no false offline storm', () => {
  test('after the master answers again its empty connection table turns nobody offline for two presence intervals; one still missing then goes offline, its offline minutes counted from then', async () => {
    w = await world()
    expect((await call(w, 'PUT', '/api/admin/settings/pollers', { body: { minion_state_presence_interval_seconds: 60 } })).status).toBe(200)
    await w.rt.scheduler.run('keys')
    await w.rt.scheduler.run('presence')
    await w.rt.masterWatch.check()
    await rule({ name: 'offline', kind: 'minion_offline', params: { for_minutes: 1 } })
    w.salt.masterDown = true
    await w.rt.masterWatch.check()
    w.clock.advance(5 * 60_000)
    await watchTime(w.deps)
    // Back with an empty connection table: its minions reconnect over the next minute or two.
    for (const m of w.salt.minions.values()) m.online = false
    w.salt.masterDown = false
    await w.rt.masterWatch.check()
    const backAt = w.clock.now()
    await w.rt.scheduler.run('presence')
    expect((await w.get('/api/activity?event_type=minion.offline')).total).toBe(0)
    expect((await w.get('/api/salt/health')).master).toMatchObject({ presence_hold: 'grace', grace_until: new Date(backAt + 120_000).toISOString() })
    w.clock.advance(60_000)
    w.salt.minions.get('web-01')!.online = true
    w.salt.minions.get('web-02')!.online = true
    await w.rt.scheduler.run('presence')
    await watchTime(w.deps)
    expect((await w.get('/api/activity?event_type=minion.offline')).total).toBe(0)
    expect(await alertsOf('minion_offline')).toEqual([])
    // The grace is over: db-01, still missing, goes offline now, and counts from now, not from its last_seen 7 min ago.
    w.clock.advance(61_000)
    await w.rt.scheduler.run('presence')
    expect((await w.get('/api/salt/health')).presence_known).toBe(true)
    expect(await presence()).toEqual({ 'db-01': 'offline', 'web-01': 'online', 'web-02': 'online' })
    expect((await w.get('/api/activity?event_type=minion.offline')).events.map((e: any) => e.minion_id)).toEqual(['db-01'])
    await watchTime(w.deps)
    expect(await alertsOf('minion_offline')).toEqual([])
    w.clock.advance(61_000)
    await watchTime(w.deps)
    const [a] = await alertsOf('minion_offline', 'firing')
    expect(a).toMatchObject({ subject: 'db-01', summary: 'db-01: offline for 1 min', details: { minutes_offline: 1 } })
  })

  test('a minion offline before the master stopped does not fire while it is down nor in the grace; after it, its minutes count from when it was first missing', async () => {
    w = await world()
    await w.rt.scheduler.run('keys')
    await w.rt.scheduler.run('presence')
    await w.rt.masterWatch.check()
    await rule({ name: 'offline', kind: 'minion_offline', params: { for_minutes: 2 } })
    w.salt.minions.get('db-01')!.online = false
    const missingAt = w.clock.now()
    await w.rt.scheduler.run('presence')
    w.clock.advance(60_000)
    w.salt.masterDown = true
    await w.rt.masterWatch.check()
    w.clock.advance(3 * 60_000)
    await watchTime(w.deps)
    expect(await alertsOf('minion_offline')).toEqual([])
    w.salt.masterDown = false
    await w.rt.masterWatch.check()
    await w.rt.scheduler.run('presence')
    await watchTime(w.deps)
    expect(await alertsOf('minion_offline')).toEqual([])
    w.clock.advance(121_000)
    await watchTime(w.deps)
    const [a] = await alertsOf('minion_offline', 'firing')
    expect(a).toMatchObject({ subject: 'db-01', details: { minutes_offline: Math.floor((w.clock.now() - missingAt) / 60_000) } })
  })

  test('presence events from the stream during the grace: only hints, and the presence tick they start marks nobody offline until the grace ends', async () => {
    w = await world()
    await w.rt.scheduler.run('keys')
    await w.rt.scheduler.run('presence')
    expect((await call(w, 'PUT', '/api/admin/settings/pollers', { body: { event_stream_enabled: true } })).status).toBe(200)
    await until(() => w.salt.streamCount === 1)
    await w.rt.masterWatch.check()
    w.salt.masterDown = true
    await w.rt.masterWatch.check()
    w.salt.masterDown = false
    await w.rt.masterWatch.check()
    // The master is back and db-01 has not reconnected yet: the stream says it is lost, and salt does not list it.
    w.salt.minions.get('db-01')!.online = false
    const ticks = () => w.rt.scheduler.stats().find((p) => p.name === 'presence')!.runs
    const before = ticks()
    w.salt.publish('salt/presence/change', { new: ['web-01'], lost: ['db-01'] })
    await until(() => ticks() > before || null, 'the presence tick the hint starts', { ms: 10_000 })
    expect((await w.get('/api/activity?event_type=minion.offline')).total).toBe(0)
    // Once the grace is over the next hint's tick is believed.
    w.clock.advance(121_000)
    w.salt.publish('salt/presence/present', { present: ['web-01', 'web-02'] })
    await until(async () => (await w.get('/api/activity?event_type=minion.offline')).total === 1, 'db-01 offline after the grace', { ms: 15_000 })
  }, 30_000)
})
