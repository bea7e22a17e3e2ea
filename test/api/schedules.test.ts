// Proves schedules (contract §16) against the fake salt-api: cron with its time zone, firing as the creator with the
// permissions it holds then (disabled with the reason when gone), an activity event per firing, each firing once even
// with two instances over one database file, and a firing missed while Saltdeck was down not replayed after a restart.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { openDb } from '../../src/db/client'
import { SaltRuntime } from '../../src/runtime'
import { createUser } from '../../src/features/users/service'
import { createSession } from '../../src/features/auth/service'
import { loadSettings } from '../../src/features/settings/service'
import { jobInitiator } from '../../src/features/jobs/service'
import { fireDueSchedules } from '../../src/features/templates/schedules'
import type { AppDeps } from '../../src/deps'
import { openPostgres } from '../../src/db/client'
import { sql } from '../../src/db/sql'
import { scheduleFirings } from '../../src/db/schema'
import { TEST_ENGINE } from '../helpers/migrations'
import { sharedCluster } from '../helpers/pg-cluster'

let w: Awaited<ReturnType<typeof saltWorld>>
const cleanup: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
  await w?.close()
})

const published = () => w.salt.calls.filter((c) => c.client === 'local_async')
/** A template and a schedule of it, made by `who`. */
async function scheduled(who: any, cron = '*/5 * * * *', timezone?: string, name = 'Ping') {
  const t = (await call(w, 'POST', '/api/templates', { who, body: { name: `${name} template`, tgt: 'web-*', fun: 'test.ping', shared: true } })).body
  const s = await call(w, 'POST', '/api/schedules', { who, body: { name, template_id: t.id, cron, ...(timezone ? { timezone } : {}) } })
  expect(s.status).toBe(201)
  return s.body
}
const events = async (type: string) => (await call(w, 'GET', `/api/activity?event_type=${type}`)).body

describe('schedules', () => {
  test('cron in its time zone gives the next run; bad cron or zone is a 422; disabling clears the next run; writes audited', async () => {
    w = await saltWorld()
    const t = (await call(w, 'POST', '/api/templates', { who: 'operator', body: { name: 'Ping', tgt: '*', fun: 'test.ping' } })).body
    // 2026-11-21T08:00Z; 09:30 in Berlin (UTC+1 in November) is 08:30Z.
    const s = await call(w, 'POST', '/api/schedules', { who: 'operator', body: { name: 'Morning ping', template_id: t.id, cron: '30 9 * * *', timezone: 'Europe/Berlin' } })
    expect(s).toMatchObject({ status: 201, body: { name: 'Morning ping', template_id: t.id, template_name: 'Ping', enabled: true, next_run_at: '2026-11-21T08:30:00.000Z', last_run_at: null, last_jid: null, last_error: null, created_by: 'oper' } })
    const utc = await call(w, 'POST', '/api/schedules', { who: 'operator', body: { name: 'utc', template_id: t.id, cron: '30 9 * * *' } })
    expect(utc.body).toMatchObject({ timezone: 'UTC', next_run_at: '2026-11-21T09:30:00.000Z' })
    for (const [body, field] of [
      [{ cron: '* * * * * *' }, 'cron'], [{ cron: '61 * * * *' }, 'cron'], [{ cron: '* * * *' }, 'cron'], [{ cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
    ] as const) {
      const r = await call(w, 'POST', '/api/schedules', { who: 'operator', body: { name: 'bad', template_id: t.id, ...body } })
      expect(r).toMatchObject({ status: 422, body: { detail: [{ type: 'value_error', loc: ['body', field] }] } })
    }
    expect((await call(w, 'POST', '/api/schedules', { who: 'operator', body: { name: 'MORNING PING', template_id: t.id, cron: '0 9 * * *' } })).status).toBe(409)
    // Another user's private template cannot be scheduled.
    expect((await call(w, 'POST', '/api/schedules', { body: { name: 'x', template_id: t.id, cron: '0 9 * * *' } })).status).toBe(404)
    expect((await call(w, 'POST', '/api/schedules', { who: 'viewer', body: { name: 'x', template_id: t.id, cron: '0 9 * * *' } })).status).toBe(403)
    expect((await call(w, 'GET', '/api/schedules')).body.schedules.map((x: any) => x.name)).toEqual(['Morning ping', 'utc'])
    // Another user who may execute, but neither created it nor holds manage template:*, cannot change or delete it.
    const role = (await call(w, 'POST', '/api/roles', { body: { name: 'runners' } })).body
    await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:*' } })
    const other = { token: (await createSession(w.deps, (await createUser(w.deps, { username: 'other', password: 'password-123', must_change_pw: false, roles: [role.id] })).id)).token }
    expect((await call(w, 'PATCH', `/api/schedules/${s.body.id}`, { who: other, body: { enabled: false } })).status).toBe(403)
    expect((await call(w, 'DELETE', `/api/schedules/${s.body.id}`, { who: other })).status).toBe(403)
    const off = await call(w, 'PATCH', `/api/schedules/${s.body.id}`, { who: 'operator', body: { enabled: false } })
    expect(off.body).toMatchObject({ enabled: false, next_run_at: null })
    const on = await call(w, 'PATCH', `/api/schedules/${s.body.id}`, { body: { enabled: true, cron: '0 12 * * *' } })
    expect(on.body).toMatchObject({ enabled: true, next_run_at: '2026-11-21T11:00:00.000Z' })
    expect((await call(w, 'DELETE', `/api/templates/${t.id}`, { who: 'operator' }))).toMatchObject({ status: 409, body: { detail: 'Template is used by schedule Morning ping' } })
    expect((await call(w, 'DELETE', `/api/schedules/${s.body.id}`, { who: 'operator' })).status).toBe(204)
    const audit = (await call(w, 'GET', '/api/audit')).body.entries.filter((e: any) => e.action.startsWith('schedule.')).map((e: any) => [e.action, e.username, e.detail])
    expect(audit).toEqual([['schedule.delete', 'oper', null], ['schedule.update', 'admin', 'enabled'], ['schedule.update', 'oper', 'disabled'], ['schedule.create', 'oper', null], ['schedule.create', 'oper', null]])
  })

  test('fires once at its time as its creator, through the schedules poller, with an activity event; next and last run move on', async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    const s = await scheduled('operator')
    expect(s.next_run_at).toBe('2026-11-21T08:05:00.000Z')
    await w.rt.scheduler.run('schedules')
    expect(published()).toEqual([])
    w.clock.advance(5 * 60_000 + 2_000)
    await w.rt.scheduler.run('schedules')
    await w.rt.scheduler.run('schedules')
    expect(published()).toMatchObject([{ fun: 'test.ping', tgt: ['web-01', 'web-02'] }])
    const after = (await call(w, 'GET', `/api/schedules/${s.id}`)).body
    expect(after).toMatchObject({ enabled: true, next_run_at: '2026-11-21T08:10:00.000Z', last_run_at: '2026-11-21T08:05:02.000Z', last_error: null })
    expect(await jobInitiator(w.deps, after.last_jid)).toBe('oper')
    expect((await events('job.schedule_fired')).events).toMatchObject([{ category: 'job', jid: after.last_jid, initiator: 'oper', target: 'Ping', success: true, summary: 'Schedule Ping ran test.ping on 2 minions' }])
  })

  test('fires with the permissions held at firing time: lost, it is not run, says why, is disabled, with an activity event', async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    const role = (await call(w, 'POST', '/api/roles', { body: { name: 'pingers' } })).body
    const grant = (await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' } })).body
    const u = await createUser(w.deps, { username: 'pinger', password: 'password-123', must_change_pw: false, roles: [role.id] })
    const s = await scheduled({ token: (await createSession(w.deps, u.id)).token })
    expect((await call(w, 'DELETE', `/api/roles/${role.id}/permissions/${grant.id}`)).status).toBe(204)
    w.clock.advance(5 * 60_000)
    expect(await fireDueSchedules(w.deps, w.rt.client)).toBe(1)
    expect(published()).toEqual([])
    expect((await call(w, 'GET', `/api/schedules/${s.id}`)).body).toMatchObject({ enabled: false, next_run_at: null, last_jid: null, last_error: 'Not run: Not allowed: function test.ping' })
    expect((await events('job.schedule_disabled')).events).toMatchObject([{ initiator: 'pinger', target: 'Ping', success: false, summary: 'Schedule Ping disabled: Not run: Not allowed: function test.ping' }])
    w.clock.advance(5 * 60_000)
    expect(await fireDueSchedules(w.deps, w.rt.client)).toBe(0)
  })
})

describe('once per firing', () => {
  /** A second instance (its own database connection, settings as its start reads them, and salt runtime) over the first one's database file. */
  async function secondInstance(path: string): Promise<AppDeps & { salt: SaltRuntime }> {
    // The first instance's database: the same file on SQLite, the same database of the test cluster on PostgreSQL.
    const db = TEST_ENGINE === 'postgres'
      ? openPostgres(sharedCluster().url((await w.deps.db.row<{ name: string }>(sql`SELECT current_database() AS name`))!.name), { max: 3, idleSeconds: 2 })
      : openDb(path)
    const deps = { ...w.deps, db, salt: undefined } as AppDeps
    await loadSettings(deps)
    const rt = new SaltRuntime(deps, { client: { backoffMs: 1, sleep: async () => {} } })
    deps.salt = rt
    cleanup.push(async () => {
      await rt.stop()
      await deps.db.close()
    })
    return deps as AppDeps & { salt: SaltRuntime }
  }
  const tempDb = () => {
    const dir = mkdtempSync(join(tmpdir(), 'saltdeck-schedules-'))
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }))
    return join(dir, 'saltdeck.db')
  }

  test('two instances over one database file tick together: every schedule fires exactly once', async () => {
    const path = tempDb()
    w = await saltWorld(undefined, path)
    await w.rt.scheduler.run('keys')
    for (const n of ['a', 'b', 'c', 'd', 'e']) await scheduled('operator', '*/5 * * * *', undefined, n)
    const other = await secondInstance(path)
    w.clock.advance(5 * 60_000)
    // Each instance ticks twice at once (its poller and a direct call), all four over the same due schedules.
    const fired = await Promise.all([fireDueSchedules(w.deps, w.rt.client), fireDueSchedules(other, other.salt.client), w.rt.scheduler.run('schedules'), other.salt.scheduler.run('schedules')])
    expect(fired[0]! + fired[1]!).toBeLessThanOrEqual(5)
    expect(published().length).toBe(5)
    expect(new Set((await events('job.schedule_fired')).events.map((e: any) => e.target))).toEqual(new Set(['a', 'b', 'c', 'd', 'e']))
    const claims = (await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${scheduleFirings}`))!.n
    expect(claims).toBe(5)
  })

  test('a restart does not fire again what fired, and does not replay a firing missed while Saltdeck was down', async () => {
    const path = tempDb()
    w = await saltWorld(undefined, path)
    await w.rt.scheduler.run('keys')
    const s = await scheduled('operator')
    w.clock.advance(5 * 60_000)
    expect(await fireDueSchedules(w.deps, w.rt.client)).toBe(1)
    // The instance restarts over the same file at once: the firing it made is not made again.
    const again = await secondInstance(path)
    expect(await fireDueSchedules(again, again.salt.client)).toBe(0)
    // Down from 08:05 to 08:40:30: the firings at 08:10 … 08:40 are missed and not replayed; the next is 08:45.
    w.clock.advance(35.5 * 60_000)
    const later = await secondInstance(path)
    expect(await fireDueSchedules(later, later.salt.client)).toBe(0)
    expect(published().length).toBe(1)
    expect((await call(w, 'GET', `/api/schedules/${s.id}`)).body).toMatchObject({ enabled: true, next_run_at: '2026-11-21T08:45:00.000Z', last_run_at: '2026-11-21T08:05:00.000Z' })
    w.clock.advance(5 * 60_000)
    expect(await fireDueSchedules(later, later.salt.client)).toBe(1)
  })
})
