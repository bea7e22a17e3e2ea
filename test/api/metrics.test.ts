// GET /metrics: who may read it, and that requests, pollers and ingest show up in the Prometheus text.
import { afterAll, describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { instrument } from '../../src/http/instrument'
import { routePatterns } from '../../src/app'
import { createApiToken } from '../../src/features/auth/service'
import { addPermission, createRole } from '../../src/features/roles/service'
import { setRoles } from '../../src/features/users/service'
import { applyFacts } from '../../src/features/ingest/apply'
import { noFacts } from '../../src/salt/facts'
import { indexActivity, recordEvents } from '../../src/features/activity/service'
import { sql } from '../../src/db/sql'
import { users } from '../../src/db/schema'

/** The value of one sample line, e.g. `saltdeck_poller_runs_total{source="default",poller="keys"}`. */
function sample(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(prefix + ' '))
  return line === undefined ? undefined : Number(line.slice(prefix.length + 1))
}

describe('access', async () => {
  const w = await testWorld()
  const viewerId = (await w.deps.db.row<{ id: string }>(sql`SELECT ${users.id} FROM ${users} WHERE ${users.username} = 'view'`))!.id

  test('anonymous is 401, a session without view metrics:* is 403', async () => {
    expect((await call(w, 'GET', '/metrics', { who: 'anon' })).status).toBe(401)
    expect(await call(w, 'GET', '/metrics', { who: 'viewer' })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
  })

  test('admin (holds *:*) reads the text format', async () => {
    const r = await call(w, 'GET', '/metrics')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
    expect(r.body).toContain('# TYPE saltdeck_http_requests_total counter')
    expect(r.body).toContain('saltdeck_build_info{version="0.1.0"} 1')
    expect(sample(r.body, 'saltdeck_db_size_bytes')).toBeGreaterThan(0)
  })

  test('the memory guard\'s collections are counted with their pauses', async () => {
    const body0 = (await call(w, 'GET', '/metrics')).body
    const before = sample(body0, 'saltdeck_memory_collections_total')!
    const seconds = sample(body0, 'saltdeck_memory_collection_seconds_total')!
    w.deps.metrics!.memoryCollection(0.004)
    w.deps.metrics!.memoryCollection(0.012)
    const body = (await call(w, 'GET', '/metrics')).body
    expect(sample(body, 'saltdeck_memory_collections_total')).toBe(before + 2)
    expect(sample(body, 'saltdeck_memory_collection_seconds_total')).toBeCloseTo(seconds + 0.016, 9)
    expect(sample(body, 'saltdeck_memory_collection_longest_seconds')).toBeGreaterThanOrEqual(0.012)
  })

  test('the search index backlog counts events not yet indexed', async () => {
    await recordEvents(w.deps, [1, 2, 3].map((i) => ({ ts: w.clock.now(), category: 'minion', event_type: 'minion.start', minion_id: `m-${i}`, summary: `m-${i} started` })))
    // Both engines index apart from the insert (SQLite's search.db, PostgreSQL's activity_search): a step catches up.
    expect(sample((await call(w, 'GET', '/metrics')).body, 'saltdeck_search_index_pending_events')).toBe(3)
    await indexActivity(w.deps)
    expect(sample((await call(w, 'GET', '/metrics')).body, 'saltdeck_search_index_pending_events')).toBe(0)
  })

  test('one rule for session and token: view metrics:* (issue 23 item 5); a role granting it opens it to both', async () => {
    const { token } = await createApiToken(w.deps, viewerId, 'prometheus', null)
    expect((await call(w, 'GET', '/metrics', { who: { cookie: w.tokens.viewer } })).status).toBe(403)
    expect(await call(w, 'GET', '/metrics', { who: { token } })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
    const operatorId = (await w.deps.db.row<{ id: string }>(sql`SELECT ${users.id} FROM ${users} WHERE ${users.username} = 'oper'`))!.id
    expect((await call(w, 'GET', '/metrics', { who: { token: (await createApiToken(w.deps, operatorId, 'prometheus', null)).token } })).status).toBe(200)
    expect((await call(w, 'GET', '/metrics', { who: 'nobody' })).status).toBe(403)
    const nobodyToken = (await createApiToken(w.deps, (await w.deps.db.row<{ id: string }>(sql`SELECT ${users.id} FROM ${users} WHERE ${users.username} = 'nobody'`))!.id, 'scraper', null)).token
    expect((await call(w, 'GET', '/metrics', { who: { token: nobodyToken } })).status).toBe(403)
    const role = await createRole(w.deps, 'scraper', '')
    await addPermission(w.deps, role.id, 'view', 'metrics:*')
    await setRoles(w.deps, (await w.deps.db.row<{ id: string }>(sql`SELECT ${users.id} FROM ${users} WHERE ${users.username} = 'nobody'`))!.id, [role.id])
    expect((await call(w, 'GET', '/metrics', { who: 'nobody' })).status).toBe(200)
    expect((await call(w, 'GET', '/metrics', { who: { token: nobodyToken } })).status).toBe(200)
  })
})

describe('content', async () => {
  const w = await saltWorld()
  afterAll(() => w.close())
  const fetch = instrument(w.deps, routePatterns(), (req) => w.app.handle(req))
  const get = async (path: string) => fetch(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${w.tokens.admin}` } }))

  test('requests are counted by route pattern and status, never by raw path', async () => {
    await get('/api/minions/web-01')
    await get('/api/minions/%3Cimg%3E')
    await get('/nowhere')
    const text = await (await get('/metrics')).text()
    expect(sample(text, 'saltdeck_http_requests_total{route="/api/minions/:minion_id",method="GET",status="404"}')).toBe(2)
    expect(sample(text, 'saltdeck_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1)
    expect(text).not.toContain('<img>')
  })

  test('poller runs and errors, events ingested and stream state', async () => {
    await w.rt.scheduler.run('keys')
    w.salt.down = true
    await w.rt.scheduler.run('presence')
    w.salt.down = false
    const before = sample(await (await get('/metrics')).text(), 'saltdeck_events_ingested_total')!
    await applyFacts(w.deps, [{ ...noFacts(), keys: [{ minionId: 'new-1', act: 'pend', ts: Date.now() }] }])
    const text = await (await get('/metrics')).text()
    expect(sample(text, 'saltdeck_poller_runs_total{source="default",poller="keys"}')).toBe(1)
    expect(sample(text, 'saltdeck_poller_errors_total{source="default",poller="keys"}')).toBe(0)
    expect(sample(text, 'saltdeck_poller_errors_total{source="default",poller="presence"}')).toBe(1)
    expect(sample(text, 'saltdeck_events_ingested_total')).toBe(before + 1)
    expect(sample(text, 'saltdeck_event_stream_connected{source="default"}')).toBe(0)
  })
})
