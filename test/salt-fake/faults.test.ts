// The known upstream faults of Salt 3007/3008 (src/salt/versions.ts), each produced on demand by the fake salt-api,
// and what Saltdeck does about them; also salt-api going away and coming back, and key actions judged by the key list.
import { afterEach, describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { until } from '../helpers/until'
import { SaltRuntime } from '../../src/runtime'
import { updateSection } from '../../src/features/settings/service'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w && (await w.close()))

const pollersStatus = async (name: string) => (await w.get('/api/admin/pollers')).pollers.find((p: any) => p.name === name)
const enableStream = () => call(w, 'PUT', '/api/admin/settings/pollers', { body: { event_stream_enabled: true } })

describe('salt 3008.0–3008.1: sessions die about a minute after login (#68999)', () => {
  test('a poller tick that meets the dead session logs in again and succeeds: no error, no lost tick', async () => {
    w = await saltWorld()
    w.salt.version = '3008.1'
    w.salt.sessionDiesMs = 100
    await w.rt.scheduler.run('keys')
    await Bun.sleep(150)
    await w.rt.scheduler.run('presence')
    expect(w.salt.rejected401).toBeGreaterThanOrEqual(1)
    for (const name of ['keys', 'presence']) expect(await pollersStatus(name)).toMatchObject({ runs: 1, errors: 0, last_error: null })
    expect((await w.get('/api/minions?status=online')).total).toBe(3)
  })
  test('the event stream reconnects through a fresh login when salt closes it on the dead session', async () => {
    w = await saltWorld()
    w.salt.sessionDiesMs = 100
    await enableStream()
    await until(() => w.rt.stream.status().connected, 'the stream connected')
    await Bun.sleep(150)
    w.salt.closeStreams()
    await until(() => w.rt.stream.status().reconnects >= 1 && w.rt.stream.status().connected, 'the stream connected again')
    expect(w.salt.rejected401).toBeGreaterThanOrEqual(1)
    w.salt.publish('salt/key', { act: 'pend', id: 'web-09', result: true })
    await until(async () => (await w.get('/api/keys')).pending.includes('web-09'), 'the event stored')
  })
})

describe('salt 3008.2: /events fails at once with a traceback (#69958)', () => {
  test('the stream is marked broken instead of reconnecting in a loop; jobs and fleet poll every 30 s meanwhile; the health view says so; nothing salt holds is lost', async () => {
    w = await saltWorld()
    w.salt.version = '3008.2'
    w.salt.eventsBroken = true
    await w.rt.start()
    await enableStream()
    await until(() => w.rt.stream.state === 'broken', 'the stream marked broken')
    const tries = w.rt.stream.status().reconnects
    await Bun.sleep(120)
    // Broken: the next try waits brokenRetryMs (200 ms in the test world), not the 10–40 ms backoff.
    expect(w.rt.stream.status().reconnects - tries).toBeLessThanOrEqual(1)
    for (const name of ['jobs', 'fleet']) expect(await pollersStatus(name)).toMatchObject({ enabled: true, interval_seconds: 30 })
    const health = await until(async () => {
      const h = await w.get('/api/salt/health')
      return h.master.version ? h : null
    }, 'the master version known')
    expect(health.event_stream).toMatchObject({ state: 'broken', polling_covers: true, catch_up_interval_seconds: 30 })
    expect(health.event_stream.last_error).toContain('Unrecoverable error in the server')
    expect(health.known_faults.map((f: any) => f.id)).toEqual(['events-traceback', 'manage-status-up', 'split-grains-cache', 'key-finger-armor'])
    expect(health.problems.join('\n')).toContain('The event stream fails at once although salt-api answers')
    // A job salt ran meanwhile reaches Saltdeck through the job cache.
    const run = await call(w, 'POST', '/api/run', { body: { tgt: 'web-01', fun: 'test.ping' } })
    expect(run.status).toBe(202)
    await w.rt.scheduler.run('jobs')
    expect((await w.get(`/api/jobs/${run.body.jid}`)).jid).toBe(run.body.jid)
    // Fixed (an upgrade): the stream connects on its next try, delivers, and the pollers go back to their own timing.
    w.salt.eventsBroken = false
    await until(() => w.salt.streamCount === 1, 'the stream open again', { ms: 5000 })
    w.salt.publish('salt/presence/present', { present: ['web-01', 'web-02', 'db-01'] })
    await until(() => w.rt.stream.state === 'connected', 'the stream connected')
    expect(await pollersStatus('jobs')).toMatchObject({ enabled: true, interval_seconds: 300 })
    expect((await w.get('/api/salt/health')).event_stream.polling_covers).toBe(false)
  })
})

describe('salt 3007.0–3008.2: manage.status counts silent minions as up (#69582)', () => {
  const stopped = async (version: string) => {
    w = await saltWorld()
    w.salt.version = version
    w.salt.statusLies = version !== '3006.28'
    expect((await call(w, 'PUT', '/api/admin/settings/salt', { body: { presence_method: 'status' } })).status).toBe(200)
    await w.rt.scheduler.run('keys')
    w.salt.minions.get('db-01')!.online = false
    await w.rt.scheduler.run('presence')
    return (await w.get('/api/minions?status=offline')).minions.map((m: any) => m.id)
  }
  test('on 3008.1 presence pings (test.ping) and a stopped minion is offline', async () => {
    expect(await stopped('3008.1')).toEqual(['db-01'])
    expect(w.salt.calls.map((c) => c.fun)).toContain('test.ping')
    expect(w.salt.calls.map((c) => c.fun)).not.toContain('manage.status')
  })
  test('on 3007.0 too', async () => {
    expect(await stopped('3007.0')).toEqual(['db-01'])
  })
  test('on 3006.28 (not affected) manage.status is used as the contract says', async () => {
    expect(await stopped('3006.28')).toEqual(['db-01'])
    expect(w.salt.calls.map((c) => c.fun)).toContain('manage.status')
    expect(w.salt.calls.map((c) => c.fun)).not.toContain('test.ping')
  })
})

describe('presence method status', () => {
  test("the master's presence events (matched by address) do not mark a minion online that the pings found down", async () => {
    w = await saltWorld()
    expect((await call(w, 'PUT', '/api/admin/settings/salt', { body: { presence_method: 'status' } })).status).toBe(200)
    await until(() => w.rt.stream.status().connected, 'the stream connected')
    await w.rt.scheduler.run('keys')
    w.salt.minions.get('db-01')!.online = false
    await w.rt.scheduler.run('presence')
    expect((await w.get('/api/minions/db-01')).online).toBe(false)
    // One host, three minions: the connection table still lists db-01 (test/salt/README.md, Quirks).
    w.salt.publish('salt/presence/present', { present: ['web-01', 'web-02', 'db-01'] })
    w.salt.publish('salt/presence/change', { new: ['db-01'], lost: [] })
    w.salt.publish('salt/key', { act: 'pend', id: 'web-09', result: true })
    await until(async () => (await w.get('/api/keys')).pending.includes('web-09'), 'the events after them stored')
    expect((await w.get('/api/minions/db-01')).online).toBe(false)
  })
})

describe('salt 3008: the split minion-data cache leaves cache.grains empty after an upgrade (#69775)', () => {
  test('grains still arrive, also on a first grains tick that runs before the keys poller has', async () => {
    w = await saltWorld()
    w.salt.version = '3008.3'
    w.salt.grainsCacheEmpty = true
    await w.rt.scheduler.run('grains')
    expect(await pollersStatus('grains')).toMatchObject({ errors: 0, items_processed: 3 })
    expect((await w.get('/api/minions/db-01')).grains.os).toBe('Debian')
  })
})

describe('salt 3008.3+: /logout revokes the token (#69067)', () => {
  test('a salt settings change logs out, and the next tick logs in afresh instead of using the revoked token', async () => {
    w = await saltWorld()
    w.salt.version = '3008.3'
    w.salt.logoutRevokes = true
    await w.rt.scheduler.run('keys')
    expect((await call(w, 'PUT', '/api/admin/settings/salt', { body: { presence_method: 'status' } })).status).toBe(200)
    await until(() => w.salt.logouts === 1, 'the old session logged out')
    await w.rt.scheduler.run('keys')
    await w.rt.scheduler.run('presence')
    expect(w.salt.rejected401).toBe(0)
    expect(await pollersStatus('keys')).toMatchObject({ runs: 2, errors: 0 })
  })
  test('stopping logs out the pollers\' session and the event stream\'s', async () => {
    w = await saltWorld()
    w.salt.logoutRevokes = true
    await enableStream()
    await until(() => w.rt.stream.status().connected, 'the stream connected')
    await w.rt.scheduler.run('keys')
    expect(w.salt.sessions.size).toBe(1)
    await w.rt.stop()
    expect(w.salt.logouts).toBe(1)
    expect(w.salt.sessions.size).toBe(0)
  })
})

describe('salt-api going away and coming back', () => {
  test('presence is unknown while salt-api does not answer; its return is noticed within a probe interval and the poller error clears', async () => {
    w = await saltWorld()
    await w.rt.start()
    await w.rt.scheduler.run('keys')
    await w.rt.scheduler.run('presence')
    expect((await w.get('/api/minions')).minions.map((m: any) => m.presence)).toEqual(['online', 'online', 'online'])
    // salt-api dies: its event stream ends with it.
    w.salt.down = true
    w.salt.closeStreams()
    await w.rt.scheduler.run('presence')
    expect((await pollersStatus('presence')).last_error).toContain('Salt API unavailable')
    expect((await w.get('/api/minions')).minions.map((m: any) => m.presence)).toEqual(['unknown', 'unknown', 'unknown'])
    const h = await w.get('/api/salt/health')
    expect(h).toMatchObject({ presence_known: false, salt_api: { reachable: false } })
    expect(h.problems[0]).toContain('salt-api does not answer')
    w.salt.down = false
    // The probe (every 50 ms here) notices and runs presence at once, long before its 60 s interval.
    await until(async () => (await pollersStatus('presence')).last_error === null, 'the presence error cleared', { ms: 2000 })
    expect((await w.get('/api/minions')).minions.map((m: any) => m.presence)).toEqual(['online', 'online', 'online'])
    expect((await w.get('/api/salt/health')).problems).toEqual([])
  })
  test('when salt-api answers again, every poller error its absence caused clears at once, and the refresh it broke runs again', async () => {
    w = await saltWorld()
    w.rt.inventoryWorker = false
    await w.rt.start()
    for (const p of ['keys', 'presence', 'grains']) await w.rt.scheduler.run(p)
    w.salt.down = true
    w.salt.closeStreams()
    await w.rt.scheduler.run('grains')
    await w.rt.scheduler.run('inventory')
    expect((await pollersStatus('grains')).last_error).toBe('Salt API unavailable')
    expect((await w.get('/api/inventory/status')).last).toMatchObject({ error: 'Salt API unavailable' })
    expect((await w.get('/api/salt/health')).problems).toContain('The grains poller failed: Salt API unavailable')
    w.salt.down = false
    // Grains runs every 5 min and inventory every 6 h: only salt-api's return clears them within seconds.
    await until(async () => (await pollersStatus('grains')).last_error === null || null, 'the grains error cleared', { ms: 2000 })
    const st = await until(async () => {
      const x = await w.get('/api/inventory/status')
      return !x.running && x.last.error === null ? x : null
    }, 'the broken refresh run again', { ms: 5000 })
    expect(st.last).toMatchObject({ minions_asked: 3, minions_answered: 3 })
    expect((await w.get('/api/salt/health')).problems).toEqual([])
  })
  test('a poller that could not run while salt-api was gone is not late while it is gone nor the moment it answers again; it is once it fails to catch up', async () => {
    w = await saltWorld()
    await updateSection(w.deps, 'pollers', { minion_state_grains_interval_seconds: 300 })
    await w.rt.start()
    await w.rt.scheduler.run('grains')
    const grains = async () => {
      const h = await w.get('/api/salt/health')
      return { late: h.pollers.find((p: any) => p.name === 'grains').late, said: h.problems.some((x: string) => x.startsWith('The grains poller has not succeeded')) }
    }
    expect(await grains()).toEqual({ late: false, said: false })
    w.salt.down = true
    expect(await w.rt.client.probe()).toBe(false)
    await w.rt.scheduler.run('keys').catch(() => {})
    expect(w.rt.client.reachability().up).toBe(false)
    // Gone for longer than three grains intervals: salt-api's own problem line says why grains did not run.
    w.clock.advance(1000_000)
    expect(await grains()).toEqual({ late: false, said: false })
    w.salt.down = false
    // The runtime's probe notices (every 50 ms here) and checks the master.
    await until(() => (w.rt.client.reachability().up && w.rt.masterWatch.health().up === true) || null, 'salt-api and the master answering', { ms: 3000 })
    expect(await grains()).toEqual({ late: false, said: false })
    // Three intervals after salt came back, grains has still not run: now it is late, and said so.
    w.clock.advance(901_000)
    expect(await grains()).toEqual({ late: true, said: true })
  })
  test('before the salt connection is entered, a tick is no error', async () => {
    const bare = await testWorld()
    const rt = new SaltRuntime(bare.deps)
    await rt.scheduler.run('keys')
    expect(rt.scheduler.status().find((p) => p.name === 'keys')).toMatchObject({ runs: 1, errors: 0, last_error: null })
  })
  test('without a salt connection, a refresh is 503 `Salt API not configured` and none is recorded (route or poller)', async () => {
    const bare = await testWorld()
    const rt = new SaltRuntime(bare.deps)
    bare.deps.salt = rt
    expect(await call(bare, 'POST', '/api/inventory/refresh', { body: {} })).toMatchObject({ status: 503, body: { detail: 'Salt API not configured' } })
    await rt.scheduler.run('inventory')
    expect(rt.scheduler.status().find((p) => p.name === 'inventory')).toMatchObject({ runs: 1, errors: 0, last_error: null })
    expect((await call(bare, 'GET', '/api/inventory/status')).body).toEqual({ running: false, current: null, last: null })
    expect((await call(bare, 'GET', '/api/audit?action=inventory.refresh')).body.total).toBe(0)
  })
})

describe('key actions are judged by the key list, on every version', () => {
  test("3008's key.delete answers no keys although it deleted one: the delete succeeds and the audit log says so", async () => {
    w = await saltWorld()
    w.salt.keyDeleteAnswersAfter = true
    await w.rt.scheduler.run('keys')
    expect((await call(w, 'DELETE', '/api/keys/web-02')).status).toBe(204)
    expect((await w.get('/api/keys')).accepted).toEqual(['db-01', 'web-01'])
    expect((await w.get('/api/audit?action=key.delete')).entries.map((a: any) => a.ok)).toEqual([true])
  })
  test('a key salt does not have is a 404 and nothing changes', async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    expect((await call(w, 'DELETE', '/api/keys/web-99')).status).toBe(404)
    expect((await call(w, 'POST', '/api/keys/web-99/accept')).status).toBe(404)
    expect((await w.get('/api/keys')).accepted).toEqual(['db-01', 'web-01', 'web-02'])
  })
})
