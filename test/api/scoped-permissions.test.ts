// Proves scoped permissions (contract §14) against the fake salt-api: grants with target_glob, POST /api/run checking the
// function and every minion salt matches before anything is published, key actions on the concrete key, kill of one's own jobs.
import { afterEach, describe, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { userWith } from '../helpers/grants'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w?.close())

/** A fleet whose minions carry a role grain, as the real bed's do. */
async function fleet() {
  w = await saltWorld()
  for (const m of w.salt.minions.values()) m.grains.role = m.id.startsWith('web') ? 'web' : 'db'
  await w.rt.scheduler.run('keys')
}

const published = () => w.salt.calls.filter((c) => c.client === 'local_async')
const expansions = () => w.salt.calls.filter((c) => c.client === 'runner' && c.fun === 'cache.grains')

describe('grants with target_glob', () => {
  test('POST answers the target (default *), GET answers it on every grant, a grant differs by its target', async () => {
    w = await saltWorld()
    const role = (await call(w, 'POST', '/api/roles', { body: { name: 'web-ops' } })).body
    const a = await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' } })
    expect(a).toMatchObject({ status: 201, body: { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' } })
    const b = await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'db-[0-9][0-9]' } })
    expect(b.status).toBe(201)
    const c = await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'view', resource_glob: 'job:*' } })
    expect(c.body.target_glob).toBe('*')
    expect(await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' } }))
      .toMatchObject({ status: 409, body: { detail: 'Permission already exists' } })
    expect((await call(w, 'GET', `/api/roles/${role.id}`)).body.permissions).toEqual([
      { id: b.body.id, verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'db-[0-9][0-9]' },
      { id: a.body.id, verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' },
      { id: c.body.id, verb: 'view', resource_glob: 'job:*', target_glob: '*' },
    ])
    const operator = (await call(w, 'GET', `/api/roles/${w.roleId('operator')}`)).body.permissions
    expect(operator.find((p: any) => p.verb === 'execute')).toMatchObject({ resource_glob: 'salt:*', target_glob: '*' })
    expect((await call(w, 'GET', '/api/audit?action=role.grant')).body.entries.map((e: any) => e.target)).toContain('web-ops: execute salt:test.* on web-*')
  })

  test('a target on a grant that is not execute on salt, or a target that is not a glob of ids, is a 422 and changes nothing', async () => {
    w = await saltWorld()
    const role = (await call(w, 'POST', '/api/roles', { body: { name: 'odd' } })).body
    const r = await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'view', resource_glob: 'minion:*', target_glob: 'web-*' } })
    expect(r).toMatchObject({ status: 422, body: { detail: [{ type: 'value_error', loc: ['body'], msg: 'Value error, target_glob scopes only grants of execute on salt:<function>' }] } })
    expect((await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:*', target_glob: 'web 01' } })).status).toBe(422)
    expect((await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:*', target_glob: '' } })).status).toBe(422)
    expect((await call(w, 'GET', `/api/roles/${role.id}`)).body.permissions).toEqual([])
  })
})

describe('POST /api/run with a role allowed test.* on web-*', () => {
  test('pings web-01 and web-02: salt expands the target, the job goes to exactly those minions as a list', async () => {
    await fleet()
    const u = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*']])
    const r = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: 'web-*', fun: 'test.ping' } })
    expect(r.status).toBe(202)
    expect(r.body.minions).toEqual(['web-01', 'web-02'])
    expect(expansions()).toEqual([{ client: 'runner', fun: 'cache.grains', tgt: undefined, kwarg: { tgt: 'web-*', tgt_type: 'glob' } }])
    expect(published()).toMatchObject([{ fun: 'test.ping', tgt: ['web-01', 'web-02'] }])
    expect(w.salt.jobs.get(r.body.jid)!.minions).toEqual(['web-01', 'web-02'])
    // A grain target that reaches only web minions is allowed too.
    const g = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: 'role:web', tgt_type: 'grain', fun: 'test.version' } })
    expect(g).toMatchObject({ status: 202, body: { minions: ['web-01', 'web-02'] } })
  })

  test.each([
    ['*', 'glob'],
    ['role:db', 'grain'],
    ['web-01 or G@role:db', 'compound'],
    ['web-01,db-01', 'list'],
  ])('is refused %p (%s): 403 naming db-01, nothing published, the refusal audited', async (tgt, tgt_type) => {
    await fleet()
    const u = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*']])
    const r = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt, tgt_type, fun: 'test.ping' } })
    expect(r).toEqual({ status: 403, body: { detail: 'Not allowed: test.ping on 1 minions (db-01)' }, headers: r.headers })
    expect(published()).toEqual([])
    expect((await call(w, 'GET', '/api/audit?action=job.run')).body.entries).toMatchObject([
      { username: u.username, action: 'job.run', target: `test.ping on ${tgt}`, ok: false, detail: 'Not allowed: test.ping on 1 minions (db-01)' },
    ])
  })

  test('is refused cmd.run anywhere: 403 naming the function, before salt is asked anything', async () => {
    await fleet()
    const u = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*']])
    const r = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: 'web-01', fun: 'cmd.run', arg: ['id'] } })
    expect(r).toMatchObject({ status: 403, body: { detail: 'Not allowed: function cmd.run' } })
    expect(expansions()).toEqual([])
    expect(published()).toEqual([])
    expect((await call(w, 'GET', '/api/audit?action=job.run')).body.entries[0]).toMatchObject({ ok: false, detail: 'Not allowed: function cmd.run' })
  })

  test('a target that matches nothing stays 404; a user with no execute grant is 403 at the door', async () => {
    await fleet()
    const u = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*']])
    expect(await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: 'nosuch-*', fun: 'test.ping' } })).toMatchObject({ status: 404, body: { detail: 'No minions matched the target' } })
    const v = await userWith(w, 'readers', [['view', 'job:*']])
    expect(await call(w, 'POST', '/api/run', { who: { token: v.token }, body: { tgt: '*', fun: 'test.ping' } })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
    expect(published()).toEqual([])
  })

  test('several grants together cover a job; the refusal names every uncovered minion, at most ten', async () => {
    w = await saltWorld(['web-01', 'web-02', 'db-01', ...Array.from({ length: 12 }, (_, i) => `db-${String(i + 2).padStart(2, '0')}`)])
    await w.rt.scheduler.run('keys')
    const u = await userWith(w, 'split', [['execute', 'salt:test.*', 'web-*'], ['execute', 'salt:test.ping', 'db-01']])
    const r = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: ['web-01', 'db-01'], tgt_type: 'list', fun: 'test.ping' } })
    expect(r.status).toBe(202)
    expect(r.body.minions.sort()).toEqual(['db-01', 'web-01'])
    // test.version is allowed on web-* only: db-01 is covered for test.ping, not for test.version.
    const v = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: 'db-01', fun: 'test.version' } })
    expect(v.body.detail).toBe('Not allowed: test.version on 1 minions (db-01)')
    const all = await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: '*', fun: 'test.ping' } })
    expect(all.body.detail).toBe('Not allowed: test.ping on 12 minions (db-02, db-03, db-04, db-05, db-06, db-07, db-08, db-09, db-10, db-11, …)')
    expect(published()).toHaveLength(1)
  })

  test('the built-in operator keeps execute salt:* on *: the whole fleet, published as a list', async () => {
    await fleet()
    const r = await call(w, 'POST', '/api/run', { who: 'operator', body: { tgt: '*', fun: 'cmd.run', arg: ['id'] } })
    expect(r.status).toBe(202)
    expect(r.body.minions.sort()).toEqual(['db-01', 'web-01', 'web-02'])
    expect(published()).toMatchObject([{ fun: 'cmd.run', tgt: ['db-01', 'web-01', 'web-02'] }])
  })

  test('GET /api/run/scope lists the execute grants with their targets', async () => {
    await fleet()
    const u = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*'], ['view', 'job:*']])
    expect((await call(w, 'GET', '/api/run/scope', { who: { token: u.token } })).body).toEqual({ grants: [{ resource_glob: 'salt:test.*', target_glob: 'web-*' }] })
    expect((await call(w, 'GET', '/api/run/scope', { who: 'operator' })).body).toEqual({ grants: [{ resource_glob: 'salt:*', target_glob: '*' }] })
    expect((await call(w, 'GET', '/api/run/scope', { who: 'viewer' })).body).toEqual({ grants: [] })
  })
})

describe('keys and kills', () => {
  test('key actions check the concrete key: accept key:web-* accepts web-03, is refused db-02 (audited), which stays pending', async () => {
    w = await saltWorld(['web-01', 'web-03', 'db-02'])
    w.salt.minions.get('web-03')!.key = 'pending'
    w.salt.minions.get('db-02')!.key = 'pending'
    await w.rt.scheduler.run('keys')
    const u = await userWith(w, 'web-keys', [['accept', 'key:web-*']])
    expect((await call(w, 'POST', '/api/keys/web-03/accept', { who: { token: u.token }, body: {} })).status).toBe(204)
    expect(await call(w, 'POST', '/api/keys/db-02/accept', { who: { token: u.token }, body: {} })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
    expect(w.salt.minions.get('db-02')!.key).toBe('pending')
    expect((await call(w, 'DELETE', '/api/keys/web-03', { who: { token: u.token } })).status).toBe(403)
    expect((await call(w, 'GET', '/api/audit?action=key.accept')).body.entries.map((e: any) => [e.target, e.ok])).toEqual([['db-02', false], ['web-03', true]])
  })

  test('without kill job:* a user kills the jobs it started, not the jobs of others', async () => {
    await fleet()
    const u = await userWith(w, 'runner', [['execute', 'salt:test.*', '*'], ['view', 'job:*']])
    const own = (await call(w, 'POST', '/api/run', { who: { token: u.token }, body: { tgt: 'web-01', fun: 'test.sleep', arg: [30] } })).body.jid
    const other = (await call(w, 'POST', '/api/run', { who: 'operator', body: { tgt: 'web-01', fun: 'test.sleep', arg: [30] } })).body.jid
    await w.rt.scheduler.run('jobs')
    expect(await call(w, 'POST', `/api/jobs/${other}/kill`, { who: { token: u.token }, body: {} })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
    expect((await call(w, 'POST', `/api/jobs/${own}/kill`, { who: { token: u.token }, body: {} })).status).toBe(202)
    expect((await call(w, 'POST', `/api/jobs/${other}/kill`, { who: 'operator', body: {} })).status).toBe(202)
    expect(w.salt.calls.filter((c) => c.fun === 'saltutil.kill_job')).toHaveLength(2)
  })
})
