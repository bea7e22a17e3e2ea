// Contract §11: the outbox survives kill -9. A served Saltdeck stores failing runs from the (fake) salt event stream,
// groups them into a notification and starts delivering it to a real HTTP receiver that hangs; it is killed with
// SIGKILL mid-delivery, started again on the same data directory, and delivers each notification exactly once.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { FakeSalt } from '../helpers/fake-salt'
import { until } from '../helpers/until'

const dir = mkdtempSync(join(tmpdir(), 'saltdeck-alerts-'))
const salt = new FakeSalt().start().addMinions(['web-01', 'web-02'])
const got: Record<string, number> = {}
let mode: 'hang' | 'ok' = 'hang'
let hung = 0
const recv = Bun.serve({
  port: 0, hostname: '127.0.0.1', idleTimeout: 0,
  async fetch(req) {
    // Only a whole notification is a delivery: a request cut short by the kill (or one with no JSON body) is not.
    let body: { id: string }
    try {
      body = JSON.parse(await req.text()) as { id: string }
    } catch {
      return new Response('not a notification', { status: 400 })
    }
    if (mode === 'hang') {
      hung++
      return new Promise<Response>(() => {})
    }
    got[body.id] = (got[body.id] ?? 0) + 1
    return new Response('ok')
  },
})
const env = {
  SALTDECK_ADMIN_PASSWORD: 'alerts-admin-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024', SALTDECK_ALERT_GROUP_SECONDS: '1',
  SALTDECK_SALT_URL: salt.url, SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_SALT_PASSWORD: 's3cr3t', SALTDECK_SALT_EAUTH: 'sharedsecret',
}
let served: Served | null = null
afterAll(async () => {
  await served?.stop()
  salt.stop()
  recv.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

test('deliveries pending at kill -9 go out after restart, once per notification id', async () => {
  served = await startServe(join(dir, 'data'), env)
  const login = await fetch(`${served.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'alerts-admin-pw' }) })
  const h = { 'content-type': 'application/json', authorization: `Bearer ${login.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}` }
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(served!.url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
    return (await r.json().catch(() => null)) as any
  }
  const ch = await api('POST', '/api/alerts/channels', { name: 'receiver', type: 'webhook', config: { url: `http://127.0.0.1:${recv.port}/hook` } })
  await api('POST', '/api/alerts/rules', { name: 'failed runs', kind: 'run_failed', channel_ids: [ch.id] })
  await until(() => salt.streamCount >= 1 || null, 'the event stream', { ms: 10_000 })
  // Two failing runs, published until stored (a stream being replaced may still be open on salt's side).
  const fail = { 'test_|-x_|-x_|-fail_without_changes': { result: false, changes: {}, comment: 'Failure!', __run_num__: 0 } }
  await until(async () => {
    // The job's publish first: a return is believed only for a minion the job was published to (contract §17).
    salt.publish('salt/job/20261123090000000001/new', { jid: '20261123090000000001', fun: 'state.apply', tgt: 'web-0*', tgt_type: 'glob', user: 'root', arg: [], minions: ['web-01', 'web-02'] })
    for (const m of ['web-01', 'web-02']) salt.publish(`salt/job/20261123090000000001/ret/${m}`, { id: m, jid: '20261123090000000001', fun: 'state.apply', retcode: 2, return: fail })
    return (await api('GET', '/api/alerts')).total === 2 || null
  }, 'two alerts firing', { ms: 10_000, every: 250 })
  // Grouped into one notification; its delivery hangs at the receiver.
  await until(() => hung >= 1 || null, 'a delivery under way', { ms: 20_000, every: 100 })
  served.proc.kill('SIGKILL')
  await served.proc.exited
  mode = 'ok'
  served = await startServe(join(dir, 'data'), env)
  const again = await fetch(`${served.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'alerts-admin-pw' }) })
  h.authorization = `Bearer ${again.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}`
  const d = await until(async () => {
    const x = await api('GET', '/api/alerts/deliveries')
    return x.deliveries.length && x.deliveries.every((y: any) => y.status === 'sent') ? x : null
  }, 'the deliveries sent after the restart', { ms: 20_000, every: 200 })
  expect(d.total).toBe(1)
  expect(Object.values(got)).toEqual([1])
  expect(Object.keys(got)).toEqual([d.deliveries[0].notification_id])
}, 90_000)
