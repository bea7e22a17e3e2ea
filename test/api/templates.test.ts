// Proves job templates (contract §16) against the fake salt-api: private and shared templates, who may change them,
// names unique case-insensitively, and a run with the caller's own permissions (§14), with an optional target override.
import { afterEach, describe, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { userWith } from '../helpers/grants'
import { jobInitiator } from '../../src/features/jobs/service'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w?.close())

const published = () => w.salt.calls.filter((c) => c.client === 'local_async')
const auditOf = async (action: string) => (await call(w, 'GET', `/api/audit?action=${action}`)).body.entries

describe('templates', () => {
  test('created with defaults, listed for the owner and (when shared) for everyone, a private one hidden from others', async () => {
    w = await saltWorld()
    const a = await call(w, 'POST', '/api/templates', { who: 'operator', body: { name: ' Ping web ', tgt: 'web-*', fun: 'test.ping' } })
    expect(a).toMatchObject({ status: 201, body: { name: 'Ping web', description: '', tgt: 'web-*', tgt_type: 'glob', fun: 'test.ping', arg: [], kwarg: {}, batch: null, shared: false, owner: 'oper' } })
    expect(a.body.created_at).toMatch(/Z$/)
    const b = await call(w, 'POST', '/api/templates', {
      who: 'operator', body: { name: 'Highstate', tgt: 'role:db', tgt_type: 'grain', fun: 'state.apply', arg: ['web'], kwarg: { test: true }, batch: '10%', shared: true },
    })
    expect(b).toMatchObject({ status: 201, body: { arg: ['web'], kwarg: { test: true }, batch: '10%', shared: true } })
    expect((await call(w, 'GET', '/api/templates', { who: 'operator' })).body.templates.map((t: any) => t.name)).toEqual(['Highstate', 'Ping web'])
    // Another user sees the shared one only; the private one is a 404, not a 403, so its existence is not told.
    expect((await call(w, 'GET', '/api/templates', { who: 'viewer' })).body.templates.map((t: any) => t.name)).toEqual(['Highstate'])
    expect((await call(w, 'GET', `/api/templates/${a.body.id}`, { who: 'viewer' })).status).toBe(404)
    expect((await call(w, 'GET', `/api/templates/${b.body.id}`, { who: 'viewer' })).body).toEqual(b.body)
    expect((await auditOf('template.create')).map((e: any) => [e.username, e.target])).toEqual([['oper', 'Highstate'], ['oper', 'Ping web']])
  })

  test('names are unique case-insensitively; bad input is a 422 and changes nothing; without execute no template is made', async () => {
    w = await saltWorld()
    expect((await call(w, 'POST', '/api/templates', { body: { name: 'Ping', tgt: '*', fun: 'test.ping' } })).status).toBe(201)
    expect(await call(w, 'POST', '/api/templates', { who: 'operator', body: { name: 'PING', tgt: '*', fun: 'test.ping', shared: true } }))
      .toMatchObject({ status: 409, body: { detail: 'Template name already exists' } })
    for (const body of [
      { name: '', tgt: '*', fun: 'test.ping' }, { name: 'x'.repeat(129), tgt: '*', fun: 'test.ping' }, { name: 'a', tgt: '*', fun: 'test ping' },
      { name: 'a', tgt: '*', fun: 'test.ping', tgt_type: 'nope' }, { name: 'a', tgt: '*', fun: 'test.ping', batch: '0' }, { name: 'a', tgt: '*', fun: 'test.ping', extra: 1 },
    ]) expect((await call(w, 'POST', '/api/templates', { body })).status).toBe(422)
    expect((await call(w, 'POST', '/api/templates', { who: 'viewer', body: { name: 'v', tgt: '*', fun: 'test.ping' } })).status).toBe(403)
    expect((await call(w, 'GET', '/api/templates')).body.templates.map((t: any) => t.name)).toEqual(['Ping'])
  })

  test('a shared template is changed or deleted by its owner or with manage template:*, not by another user', async () => {
    w = await saltWorld()
    const t = (await call(w, 'POST', '/api/templates', { who: 'operator', body: { name: 'Shared', tgt: '*', fun: 'test.ping', shared: true } })).body
    const other = await userWith(w, 'runner', [['execute', 'salt:*']])
    expect(await call(w, 'PATCH', `/api/templates/${t.id}`, { who: { token: other.token }, body: { fun: 'cmd.run', arg: ['reboot'] } })).toMatchObject({ status: 403 })
    expect((await call(w, 'DELETE', `/api/templates/${t.id}`, { who: { token: other.token } })).status).toBe(403)
    expect((await call(w, 'GET', `/api/templates/${t.id}`)).body.fun).toBe('test.ping')
    const own = await call(w, 'PATCH', `/api/templates/${t.id}`, { who: 'operator', body: { description: 'pings everything' } })
    expect(own).toMatchObject({ status: 200, body: { description: 'pings everything', fun: 'test.ping', owner: 'oper' } })
    const admin = await call(w, 'PATCH', `/api/templates/${t.id}`, { body: { name: 'Shared ping', tgt: 'web-*' } })
    expect(admin).toMatchObject({ status: 200, body: { name: 'Shared ping', tgt: 'web-*', owner: 'oper' } })
    expect((await call(w, 'PATCH', `/api/templates/${t.id}`, { body: {} })).status).toBe(422)
    expect((await auditOf('template.update')).map((e: any) => [e.username, e.target])).toEqual([['admin', 'Shared ping'], ['oper', 'Shared']])
    expect((await call(w, 'DELETE', `/api/templates/${t.id}`)).status).toBe(204)
    expect((await call(w, 'GET', `/api/templates/${t.id}`)).status).toBe(404)
    expect((await auditOf('template.delete')).map((e: any) => e.username)).toEqual(['admin'])
  })
})

describe('POST /api/templates/{id}/run', () => {
  test("runs with the caller's permissions: refused on minions outside its grants, allowed with a target override inside them", async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    const t = (await call(w, 'POST', '/api/templates', { body: { name: 'Ping all', tgt: '*', fun: 'test.ping', shared: true } })).body
    const web = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*']])
    const refused = await call(w, 'POST', `/api/templates/${t.id}/run`, { who: { token: web.token }, body: {} })
    expect(refused).toMatchObject({ status: 403, body: { detail: 'Not allowed: test.ping on 1 minions (db-01)' } })
    expect(published()).toEqual([])
    const ok = await call(w, 'POST', `/api/templates/${t.id}/run`, { who: { token: web.token }, body: { tgt: 'web-*' } })
    expect(ok).toMatchObject({ status: 202, body: { minions: ['web-01', 'web-02'] } })
    expect(published()).toMatchObject([{ fun: 'test.ping', tgt: ['web-01', 'web-02'] }])
    expect(await jobInitiator(w.deps, ok.body.jid)).toBe('web-testers-user')
    const runs = await auditOf('template.run')
    expect(runs.map((e: any) => [e.username, e.target, e.ok])).toEqual([['web-testers-user', 'Ping all: test.ping on web-*', true], ['web-testers-user', 'Ping all: test.ping on *', false]])
    expect(runs[0].detail).toBe(`jid ${ok.body.jid}`)
  })

  test('a template with a batch runs in batches of that size: the first slice only is published, the batch answers its slices', async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    const t = (await call(w, 'POST', '/api/templates', { body: { name: 'Ping one by one', tgt: '*', fun: 'test.ping', batch: '1' } })).body
    const r = await call(w, 'POST', `/api/templates/${t.id}/run`, { body: {} })
    expect(r).toMatchObject({ status: 202, body: { minions: ['db-01', 'web-01', 'web-02'] } })
    expect(typeof r.body.batch_id).toBe('string')
    // One slice of one minion out so far; the rest wait for its return.
    expect(published().map((c) => c.tgt)).toEqual([['db-01']])
    const b = (await call(w, 'GET', `/api/batches/${r.body.batch_id}`)).body
    expect(b.slices.map((s: any) => s.minions)).toEqual([['db-01'], ['web-01'], ['web-02']])
    expect((await auditOf('template.run'))[0].detail).toBe(`jid ${r.body.jid}, batch ${r.body.batch_id}`)
  })

  test("another user's private template cannot be run (404); a viewer cannot run at all (403); nothing is published", async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    const t = (await call(w, 'POST', '/api/templates', { body: { name: 'Mine', tgt: '*', fun: 'test.ping' } })).body
    expect((await call(w, 'POST', `/api/templates/${t.id}/run`, { who: 'operator', body: {} })).status).toBe(404)
    expect((await call(w, 'POST', `/api/templates/${t.id}/run`, { who: 'viewer', body: {} })).status).toBe(403)
    expect((await call(w, 'POST', `/api/templates/${t.id}/run`, { body: { tgt: '' } })).status).toBe(422)
    expect(published()).toEqual([])
    expect((await call(w, 'POST', `/api/templates/${t.id}/run`, { body: {} })).status).toBe(202)
  })
})
