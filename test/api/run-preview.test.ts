// Proves the target preview (contract §16) against the fake salt-api: salt's own matching through runner cache.grains,
// the first 1,000 ids with the full count, the minions outside the caller's grants, functions_allowed, nothing published.
import { afterEach, describe, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { userWith } from '../helpers/grants'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w?.close())

const published = () => w.salt.calls.filter((c) => c.client === 'local' || c.client === 'local_async')

describe('POST /api/run/preview', () => {
  test('answers what salt matches for each target type, with the count; nothing is published and no job is recorded', async () => {
    w = await saltWorld()
    w.salt.minions.get('db-01')!.grains.os = 'Rocky'
    const preview = async (body: Record<string, unknown>) => (await call(w, 'POST', '/api/run/preview', { body })).body
    expect(await preview({ tgt: 'web-*' })).toEqual({ count: 2, minions: ['web-01', 'web-02'], outside_scope: [], functions_allowed: null })
    expect(await preview({ tgt: 'os:Debian', tgt_type: 'grain' })).toMatchObject({ count: 2, minions: ['web-01', 'web-02'] })
    expect(await preview({ tgt: 'G@os:Rocky or L@web-02', tgt_type: 'compound' })).toMatchObject({ count: 2, minions: ['db-01', 'web-02'] })
    expect(await preview({ tgt: ['db-01', 'nope'], tgt_type: 'list' })).toMatchObject({ count: 1, minions: ['db-01'] })
    expect(await preview({ tgt: '^db', tgt_type: 'pcre', fun: 'cmd.run' })).toEqual({ count: 1, minions: ['db-01'], outside_scope: [], functions_allowed: true })
    // A target that matches nothing is an answer, not a 404: the form says "matches 0 minions".
    expect(await preview({ tgt: 'nothing-*' })).toEqual({ count: 0, minions: [], outside_scope: [], functions_allowed: null })
    expect(w.salt.calls.filter((c) => c.client === 'runner').map((c) => c.kwarg)).toContainEqual({ tgt: 'G@os:Rocky or L@web-02', tgt_type: 'compound' })
    expect(published()).toEqual([])
    expect((await call(w, 'GET', '/api/jobs?include_internal=true')).body.total).toBe(0)
  })

  test('a large fleet: count says how many, minions lists the first 1,000 in order', async () => {
    w = await saltWorld(Array.from({ length: 1203 }, (_, i) => `node-${String(i).padStart(4, '0')}`))
    const r = await call(w, 'POST', '/api/run/preview', { body: { tgt: 'node-*' } })
    expect(r.status).toBe(200)
    expect(r.body.count).toBe(1203)
    expect(r.body.minions).toHaveLength(1000)
    expect(r.body.minions[0]).toBe('node-0000')
    expect(r.body.minions[999]).toBe('node-0999')
  })

  test("a scoped user: outside_scope names the minions its grants do not cover, for the function or for any execute grant; functions_allowed says whether any grant allows it", async () => {
    w = await saltWorld()
    const u = await userWith(w, 'web-testers', [['execute', 'salt:test.*', 'web-*']])
    const preview = async (body: Record<string, unknown>) => (await call(w, 'POST', '/api/run/preview', { who: { token: u.token }, body })).body
    expect(await preview({ tgt: '*' })).toEqual({ count: 3, minions: ['db-01', 'web-01', 'web-02'], outside_scope: ['db-01'], functions_allowed: null })
    expect(await preview({ tgt: '*', fun: 'test.ping' })).toEqual({ count: 3, minions: ['db-01', 'web-01', 'web-02'], outside_scope: ['db-01'], functions_allowed: true })
    expect(await preview({ tgt: 'web-*', fun: 'test.ping' })).toMatchObject({ outside_scope: [], functions_allowed: true })
    expect(await preview({ tgt: 'web-*', fun: 'cmd.run' })).toMatchObject({ outside_scope: ['web-01', 'web-02'], functions_allowed: false })
    expect(published()).toEqual([])
  })

  test('permission: any execute grant; a viewer is refused (403) and salt is not asked', async () => {
    w = await saltWorld()
    const viewer = await userWith(w, 'lookers', [['view', 'job:*']])
    const r = await call(w, 'POST', '/api/run/preview', { who: { token: viewer.token }, body: { tgt: '*' } })
    expect(r.status).toBe(403)
    expect(w.salt.calls.filter((c) => c.client === 'runner' && c.fun === 'cache.grains')).toEqual([])
  })

  test('a runner-only holder (execute runner:…) previews too: every matched minion is outside its scope, no function allowed', async () => {
    w = await saltWorld()
    const u = await userWith(w, 'orchestrators', [['execute', 'runner:state.orchestrate', '*']])
    const r = await call(w, 'POST', '/api/run/preview', { who: { token: u.token }, body: { tgt: 'web-*', fun: 'test.ping' } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ count: 2, minions: ['web-01', 'web-02'], outside_scope: ['web-01', 'web-02'], functions_allowed: false })
    const any = await call(w, 'POST', '/api/run/preview', { who: { token: u.token }, body: { tgt: 'web-*' } })
    expect(any.body).toMatchObject({ count: 2, outside_scope: ['web-01', 'web-02'], functions_allowed: null })
  })

  test('bad input is a 422 that asks salt nothing: no target, an unknown type, a function with spaces, an unknown field', async () => {
    w = await saltWorld()
    for (const body of [{}, { tgt: '' }, { tgt: '*', tgt_type: 'regex' }, { tgt: '*', fun: 'cmd run' }, { tgt: '*', batch: 2 }]) {
      const r = await call(w, 'POST', '/api/run/preview', { body })
      expect({ body, status: r.status }).toEqual({ body, status: 422 })
      expect(Array.isArray(r.body.detail)).toBe(true)
    }
    expect(w.salt.calls.filter((c) => c.client === 'runner' && c.fun === 'cache.grains')).toEqual([])
  })

  test('salt answering something other than a minion map is a 502, not an empty preview', async () => {
    w = await saltWorld()
    w.salt.fail500 = 10
    const r = await call(w, 'POST', '/api/run/preview', { body: { tgt: '*' } })
    expect(r.status).toBe(502)
  })
})
