// Contract §15 with real processes: two (then three) `saltdeck serve` on one PostgreSQL database and one fake salt-api.
// Shared state holds across instances within 1 s (settings, a revoked token, the login throttle, the live activity
// stream); one instance leads the salt source; after a kill -9 of the leader another leads within 15 s and stores
// what salt's job cache got during the gap; a leader whose lock connection is cut stops its pollers.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { FakeSalt, newJid } from '../helpers/fake-salt'
import { freshPostgresUrl } from '../helpers/migrations'
import { until } from '../helpers/until'
import { openPostgres } from '../../src/db/client'
import { sql } from '../../src/db/sql'
import { LEADER_LOCK_CLASS } from '../../src/db/cluster-pg'

const root = mkdtempSync(join(tmpdir(), 'saltdeck-cluster-'))
const salt = new FakeSalt().start().addMinions(['web-01', 'web-02'])
let url = ''
const env = () => ({
  SALTDECK_DATABASE_URL: url, SALTDECK_ADMIN_PASSWORD: 'cluster-admin-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024',
  SALTDECK_SALT_URL: salt.url, SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_SALT_PASSWORD: 's3cr3t', SALTDECK_SALT_EAUTH: 'sharedsecret',
})
const running: Served[] = []
let n = 0

/** Starts one more instance with its own data directory and the first one's secret.key (the README's rule). */
async function instance(): Promise<Served> {
  const dir = join(root, `i${n++}`)
  if (n > 1) {
    const { mkdirSync } = await import('node:fs')
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    copyFileSync(join(root, 'i0', 'secret.key'), join(dir, 'secret.key'))
  }
  const s = await startServe(dir, env())
  running.push(s)
  return s
}

let token = ''
const api = async (s: Served, method: string, path: string, body?: unknown, bearer = token) => {
  const r = await fetch(s.url + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: r.status, body: (await r.json().catch(() => null)) as any }
}
const login = (s: Served, username: string, password: string) =>
  fetch(`${s.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
/** The source's pollers an instance has scheduled (a follower has none). */
const scheduled = async (s: Served) => ((await api(s, 'GET', '/api/admin/pollers')).body.pollers as any[]).filter((p) => p.name !== 'retention' && p.next_run_at !== null).map((p) => p.name)
/** Which instance ids lead `name` now, as any instance lists them. */
const leadersOf = async (s: Served, name: string) => ((await api(s, 'GET', '/api/cluster')).body.instances as any[]).filter((i) => i.leads.includes(name)).map((i) => i.id)

let a: Served
let b: Served
/** An instance's id, as its log says at start. */
const idOf = async (s: Served) => /instance"?[:=]"([0-9a-f-]+)"/.exec(s.output())![1]!

beforeAll(async () => {
  url = await freshPostgresUrl()
  a = await instance()
  b = await instance()
  const r = await login(a, 'admin', 'cluster-admin-pw')
  token = r.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
  // A schedule firing every minute, whoever leads: the once-only test at the end counts its firings.
  const t = (await api(a, 'POST', '/api/templates', { name: 'Ping web-02', tgt: 'web-02', fun: 'test.ping', shared: true })).body
  expect((await api(a, 'POST', '/api/schedules', { name: 'every minute', template_id: t.id, cron: '* * * * *' })).status).toBe(201)
}, 60_000)

afterAll(async () => {
  for (const s of running) if (s.proc.exitCode === null) await s.stop()
  salt.stop()
  rmSync(root, { recursive: true, force: true })
})

describe('any instance serves any request', () => {
  test('GET /api/cluster on either lists both instances, with one leader of the salt source and one of fleet-wide work', async () => {
    const listed = await until(async () => {
      const x = (await api(b, 'GET', '/api/cluster')).body
      return x.instances.length === 2 ? x.instances : null
    }, 'both instances listed', { ms: 10_000, every: 100 })
    for (const i of listed) {
      expect(i).toMatchObject({ engine: 'postgres', version: expect.any(String), hostname: expect.any(String) })
      expect(Date.parse(i.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(i.started_at))
    }
    expect(await leadersOf(a, 'default')).toHaveLength(1)
    expect(await leadersOf(a, '(fleet)')).toHaveLength(1)
    // The first to start took both.
    expect(listed[0].leads).toEqual(['(fleet)', 'default'])
    expect(listed[1].leads).toEqual([])
    // The follower schedules none of the source's pollers; the leader does.
    expect(await scheduled(b)).toEqual([])
    expect((await scheduled(a)).length).toBeGreaterThan(0)
  })

  test('a session made on A works on B; a settings change through A holds on B within 1 s', async () => {
    expect((await api(b, 'GET', '/api/activity/widget-config')).body.widget_event_count).toBe(6)
    expect((await api(a, 'PUT', '/api/admin/settings/widget', { widget_event_count: 17 })).status).toBe(200)
    const t0 = Date.now()
    await until(async () => (await api(b, 'GET', '/api/activity/widget-config')).body.widget_event_count === 17 || null, 'B reads the new widget setting', { ms: 1000, every: 20 })
    expect(Date.now() - t0).toBeLessThan(1000)
  })

  test('an API token revoked on A is refused on B at once', async () => {
    const made = await api(a, 'POST', '/api/auth/tokens', { name: 'script' })
    expect(made.status).toBe(201)
    expect((await api(b, 'GET', '/api/auth/me', undefined, made.body.token)).status).toBe(200)
    expect((await api(a, 'DELETE', `/api/auth/tokens/${made.body.id}`)).status).toBe(204)
    expect((await api(b, 'GET', '/api/auth/me', undefined, made.body.token)).status).toBe(401)
  })

  test('the login throttle counts failures on every instance: five on A, the sixth on B is 429', async () => {
    for (let i = 0; i < 5; i++) expect((await login(a, 'nobody', 'wrong')).status).toBe(401)
    const r = await login(b, 'nobody', 'wrong')
    expect(r.status).toBe(429)
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test("B's live activity stream carries an event A stored from salt", async () => {
    await until(() => salt.streamCount >= 1 || null, "the leader's event stream", { ms: 15_000, every: 100 })
    const res = await fetch(`${b.url}/api/activity/stream`, { headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    let seen = ''
    // The stream is open (its first frame) before the event happens.
    while (!seen.includes('retry:')) seen += dec.decode((await reader.read()).value)
    const jid = newJid()
    salt.publish(`salt/job/${jid}/new`, { jid, fun: 'test.ping', tgt: 'web-01', tgt_type: 'glob', user: 'root', arg: [], minions: ['web-01'] })
    const deadline = Date.now() + 5000
    while (!seen.includes(jid) && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
      if (!chunk || chunk.done) break
      seen += dec.decode(chunk.value)
    }
    await reader.cancel()
    expect(seen).toContain(jid)
    // A stored it (A leads); B's own ingest never saw it.
    expect((await api(b, 'GET', `/api/jobs/${jid}`)).status).toBe(200)
  }, 30_000)

  test('/metrics counts the bus: A sent notices, B received them', async () => {
    const text = async (s: Served) => (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text()
    const value = (t: string, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(t)?.[1] ?? -1)
    expect(value(await text(a), 'saltdeck_cluster_notifications_sent_total')).toBeGreaterThan(0)
    expect(value(await text(b), 'saltdeck_cluster_notifications_received_total')).toBeGreaterThan(0)
  })
})

describe('Salt health on a follower', () => {
  test("B, which does not lead, shows A's event stream and pollers and says A leads; A says it leads", async () => {
    const [leader] = await leadersOf(a, 'default')
    const idA = await idOf(a)
    expect(leader).toBe(idA)
    // A's heartbeat (every 5 s) carries its salt side's state once its stream is up and its pollers have run.
    const onB = await until(async () => {
      const h = (await api(b, 'GET', '/api/salt/health')).body
      return h.event_stream.state === 'connected' && h.pollers.some((p: any) => p.last_success_at !== null) ? h : null
    }, "A's stream and pollers on B's Salt health", { ms: 15_000, every: 200 })
    expect(onB.leader).toMatchObject({ instance_id: idA, here: false, hostname: expect.any(String) })
    expect(Date.parse(onB.leader.reported_at)).toBeGreaterThan(Date.now() - 60_000)
    expect(onB.sources[0].leader).toEqual(onB.leader)
    const onA = (await api(a, 'GET', '/api/salt/health')).body
    expect(onA.leader).toMatchObject({ instance_id: idA, here: true })
    // The same pollers as the leader's own, and none of B's idle ones: B schedules none (scheduled(b) is empty).
    expect(onB.pollers.map((p: any) => p.name).sort()).toEqual(onA.pollers.map((p: any) => p.name).sort())
    expect(await scheduled(b)).toEqual([])
    expect(onB.problems.filter((p: string) => /event stream|poller/.test(p))).toEqual([])
    // Someone who may see Salt health but not list the instances (view setting:*) learns only that another leads.
    const role = (await api(a, 'POST', '/api/roles', { name: 'minion-viewers' })).body
    expect((await api(a, 'POST', `/api/roles/${role.id}/permissions`, { verb: 'view', resource_glob: 'minion:*' })).status).toBe(201)
    expect((await api(a, 'POST', '/api/users', { username: 'minionviewer', password: 'minionviewer-pw', must_change_pw: false, roles: [role.id] })).status).toBe(201)
    const viewer = (await login(b, 'minionviewer', 'minionviewer-pw')).headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
    expect((await api(b, 'GET', '/api/cluster', undefined, viewer)).status).toBe(403)
    const seen = await api(b, 'GET', '/api/salt/health', undefined, viewer)
    expect(seen.status).toBe(200)
    expect(seen.body.leader).toMatchObject({ instance_id: null, hostname: null, here: false })
    expect(seen.body.event_stream.state).toBe('connected')
  }, 30_000)
})

describe('one leader per salt source', () => {
  test('kill -9 of the leader: B leads within 15 s and stores the job salt ran during the gap', async () => {
    const [leader] = await leadersOf(b, 'default')
    const ids = ((await api(b, 'GET', '/api/cluster')).body.instances as any[]).map((i) => i.id)
    expect(ids[0]).toBe(leader)
    a.proc.kill('SIGKILL')
    await a.proc.exited
    const killedAt = Date.now()
    // A job salt ran while nobody led: only salt's job cache holds it.
    const jid = newJid()
    salt.jobs.set(jid, { fun: 'test.ping', tgt: 'web-02', user: 'root', minions: ['web-02'], returns: { 'web-02': true }, start: Date.now() })
    const now = await until(async () => {
      const l = await leadersOf(b, 'default')
      return l.length === 1 && l[0] !== leader ? l : null
    }, 'B leads the salt source', { ms: 15_000, every: 200 })
    expect(Date.now() - killedAt).toBeLessThan(15_000)
    expect(now[0]).toBe(ids[1])
    await until(async () => (await leadersOf(b, '(fleet)'))[0] === ids[1] || null, 'B leads fleet-wide work', { ms: 15_000 - (Date.now() - killedAt), every: 200 })
    const job = await until(async () => {
      const r = await api(b, 'GET', `/api/jobs/${jid}`)
      return r.status === 200 ? r.body : null
    }, 'the gap job stored', { ms: 10_000, every: 200 })
    expect(job.fun).toBe('test.ping')
  }, 45_000)

  test("the leader's lock connection cut: it stops its pollers, and the source is led again within 15 s", async () => {
    const c = await instance()
    // A's row stays listed for a minute after its death, leading nothing.
    await until(async () => ((await api(c, 'GET', '/api/cluster')).body.instances.length === 3) || null, 'C listed', { ms: 10_000, every: 100 })
    const admin = openPostgres(url)
    try {
      // Each leadership is held on a connection of its own: cut the one of the source `default`.
      const holders = await admin.rows<{ pid: number }>(sql.raw(`SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = ${LEADER_LOCK_CLASS} AND objid = hashtext('default')::oid AND granted`))
      expect(holders).toHaveLength(1)
      const cut = Date.now()
      await admin.exec(sql.raw(`SELECT pg_terminate_backend(${holders[0]!.pid})`))
      await until(() => b.output().includes('leadership lost: its work stops') || null, 'B stops its work', { ms: 10_000, every: 100 })
      const l = await until(async () => {
        const x = await leadersOf(c, 'default')
        return x.length === 1 ? x : null
      }, 'the source led again', { ms: 15_000, every: 200 })
      expect(Date.now() - cut).toBeLessThan(15_000)
      expect(l).toHaveLength(1)
      // Whichever instance does not lead now schedules none of the source's pollers.
      const [cId, bId] = [await idOf(c), await idOf(b)]
      const follower = l[0] === cId ? b : c
      expect(l[0] === cId || l[0] === bId).toBe(true)
      await until(async () => (await scheduled(follower)).length === 0 || null, 'the follower stops its pollers', { ms: 5000, every: 100 })
      // Exactly one session holds each lock now.
      const held = await admin.rows<{ n: number }>(sql.raw(`SELECT objid, count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = ${LEADER_LOCK_CLASS} AND granted GROUP BY objid`))
      expect(held.map((h) => h.n)).toEqual([1, 1].slice(0, held.length))
    } finally {
      await admin.close()
    }
  }, 45_000)

  test('a once-only task runs once: each minute of the schedule fired once across the instances and the handovers', async () => {
    const admin = openPostgres(url)
    try {
      const count = async (q: string) => (await admin.row<{ n: number }>(sql.raw(q)))!.n
      const firings = () => count('SELECT count(*)::int AS n FROM schedule_firings')
      const firedEvents = () => count(`SELECT count(*)::int AS n FROM activity_events WHERE event_type = 'job.schedule_fired'`)
      // A firing is claimed, published, then its event stored: wait for the event, then for every claim's.
      await until(async () => (await firedEvents()) >= 1 || null, 'the schedule fired', { ms: 80_000, every: 500 })
      await until(async () => (await firedEvents()) === (await firings()) || null, 'every claimed firing done', { ms: 10_000, every: 200 })
      const published = salt.calls.filter((c) => c.client === 'local_async' && c.fun === 'test.ping')
      expect(published.length).toBe(await firings())
      expect(published.every((c) => JSON.stringify(c.tgt) === JSON.stringify(['web-02']))).toBe(true)
    } finally {
      await admin.close()
    }
  }, 90_000)
})
