// Proves the event stream read on its worker thread (the service's default): events arrive parsed and normalised in
// the worker and are stored once on the main thread; skipped frames, a token expiring mid-stream and a stop behave as
// on the main thread (pollers.test.ts covers those paths with the reader on the main thread).
import { afterEach, expect, test } from 'bun:test'
import { saltWorld } from '../helpers/salt-world'
import { until } from '../helpers/until'
import { known } from '../helpers/salt-world'
import { call } from '../helpers/app'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w?.close())

/** A world whose stream reads on the worker, enabled and connected. */
async function workerWorld() {
  w = await saltWorld()
  w.rt.stream.useWorker = true
  expect((await call(w, 'PUT', '/api/admin/settings/pollers', { body: { event_stream_enabled: true } })).status).toBe(200)
  await until(() => w.salt.streamCount === 1, 'one open stream', { ms: 5000 })
  expect(w.rt.stream.threaded).toBe(true)
  return w
}

test('events are read on the worker and stored once; a malformed frame is counted as skipped', async () => {
  await workerWorld()
  await until(() => w.rt.stream.connected, 'the stream connected', { ms: 2000 })
  const jid = '20261121080000000007'
  w.salt.sendRaw('tag: broken\ndata: {not json\n\n')
  w.salt.publish(`salt/job/${jid}/new`, { jid, fun: 'test.ping', tgt: '*', user: 'root', minions: ['web-01', 'web-02'] })
  for (const m of ['web-01', 'web-02', 'web-01']) w.salt.publish(`salt/job/${jid}/ret/${m}`, { id: m, jid, fun: 'test.ping', retcode: 0, return: true })
  await until(async () => (await w.get(`/api/activity?jid=${jid}`)).total === 3, 'three events of the job')
  await Bun.sleep(100)
  const evs = (await w.get(`/api/activity?jid=${jid}`)).events
  expect(evs.map((e: any) => `${e.event_type} ${e.minion_id}`).sort()).toEqual(['job.new null', 'job.ret web-01', 'job.ret web-02'])
  expect(evs.find((e: any) => e.event_type === 'job.ret').initiator).toBe('root')
  expect(w.rt.stream.status()).toMatchObject({ connected: true, frames_skipped: 1, events_ingested: 4 })
})

test('an expired token mid-stream: the worker logs in again and reconnects', async () => {
  await workerWorld()
  w.salt.expireSessions()
  w.salt.closeStreams()
  await until(() => w.salt.streamCount === 1 && w.salt.sessions.size === 1, 'one stream on a new session')
  // A start is recorded for a minion Saltdeck knows only (a start is a minion's claim).
  await known(w, 'web-02')
  w.salt.publish('salt/minion/web-02/start', { id: 'web-02' })
  await until(async () => (await w.get('/api/activity?event_type=minion.start')).total === 1, 'the minion.start event')
  expect(w.rt.stream.status().reconnects).toBeGreaterThanOrEqual(1)
})

test('a stop writes what the worker handed over, then the worker ends', async () => {
  await workerWorld()
  // A start is recorded for a minion Saltdeck knows only (a start is a minion's claim).
  await known(w, 'web-03')
  w.salt.publish('salt/minion/web-03/start', { id: 'web-03' })
  await until(() => w.rt.stream.pendingCount === 1, 'one event handed over', { ms: 1000 })
  await w.rt.stop()
  expect((await w.get('/api/activity?event_type=minion.start')).total).toBe(1)
  expect(w.rt.stream.threaded).toBe(false)
  expect(w.rt.stream.connected).toBe(false)
  expect(w.salt.streamCount).toBeLessThanOrEqual(1)
})
