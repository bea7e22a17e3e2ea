// Issue 20 item 12: bidirectional controls (U+202A–U+202E, U+2066–U+2069) are refused with 422 in every name a person
// types (one schema, lib/schemas.ts PlainText, used by each of these fields), and the request changes nothing.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { sql } from '../../src/db/sql'

type World = Awaited<ReturnType<typeof testWorld>>
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']
/** A name that reads as "adminexe.png" where it is shown. */
const spoof = (c = '\u202e') => `admin${c}gnp.exe`

/** Each field a person names something with: the request that sets it, with `v` as that name. */
const FIELDS: [string, (w: World) => Promise<{ method: string; path: string; body: (v: string) => unknown; loc: string[] }>][] = [
  ['role name', async () => ({ method: 'POST', path: '/api/roles', body: (v) => ({ name: v }), loc: ['body', 'name'] })],
  ['role description', async () => ({ method: 'POST', path: '/api/roles', body: (v) => ({ name: 'ops', description: v }), loc: ['body', 'description'] })],
  ['permission glob', async (w) => {
    const id = (await call(w, 'POST', '/api/roles', { body: { name: 'ops' } })).body.id
    return { method: 'POST', path: `/api/roles/${id}/permissions`, body: (v) => ({ verb: 'view', resource_glob: v }), loc: ['body', 'resource_glob'] }
  }],
  ['display name (create)', async () => ({ method: 'POST', path: '/api/users', body: (v) => ({ username: 'carol', password: 'password-123', display_name: v }), loc: ['body', 'display_name'] })],
  ['display name (change)', async (w) => {
    const id = (await call(w, 'POST', '/api/users', { body: { username: 'carol', password: 'password-123' } })).body.id
    return { method: 'PATCH', path: `/api/users/${id}`, body: (v) => ({ display_name: v }), loc: ['body', 'display_name'] }
  }],
  ['API token name', async () => ({ method: 'POST', path: '/api/auth/tokens', body: (v) => ({ name: v }), loc: ['body', 'name'] })],
  ['alert rule name', async () => ({ method: 'POST', path: '/api/alerts/rules', body: (v) => ({ name: v, kind: 'run_failed' }), loc: ['body', 'name'] })],
  ['alert rule name (change)', async (w) => {
    const id = (await call(w, 'POST', '/api/alerts/rules', { body: { name: 'failed', kind: 'run_failed' } })).body.id
    return { method: 'PATCH', path: `/api/alerts/rules/${id}`, body: (v) => ({ name: v }), loc: ['body', 'name'] }
  }],
  ['channel name', async () => ({ method: 'POST', path: '/api/alerts/channels', body: (v) => ({ name: v, type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } }), loc: ['body', 'name'] })],
  ['channel name (change)', async (w) => {
    const id = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } } })).body.id
    return { method: 'PATCH', path: `/api/alerts/channels/${id}`, body: (v) => ({ name: v }), loc: ['body', 'name'] }
  }],
  ['silence comment', async (w) => ({ method: 'POST', path: '/api/alerts/silences', body: (v) => ({ subject_glob: 'db-*', ends_at: new Date(w.clock.now() + 3600_000).toISOString(), comment: v }), loc: ['body', 'comment'] })],
]

describe('bidirectional controls in names', () => {
  test.each(FIELDS)('%s: each bidi control is 422 string_pattern_mismatch and changes nothing; the plain name is accepted', async (_what, setup) => {
    const w = await testWorld()
    const f = await setup(w)
    const snapshot = async () => JSON.stringify([
      await w.deps.db.rows(sql`SELECT name, description FROM roles ORDER BY id`),
      await w.deps.db.rows(sql`SELECT coalesce(display_name, '') AS d FROM users ORDER BY id`),
      await w.deps.db.row(sql`SELECT (SELECT count(*) FROM alert_rules) AS r, (SELECT count(*) FROM alert_channels) AS c, (SELECT count(*) FROM alert_silences) AS s`),
    ])
    const before = await snapshot()
    for (const c of BIDI) {
      const r = await call(w, f.method, f.path, { body: f.body(spoof(c)) })
      expect([c.codePointAt(0)!.toString(16), r.status]).toEqual([c.codePointAt(0)!.toString(16), 422])
      expect(r.body.detail[0]).toMatchObject({ type: 'string_pattern_mismatch', loc: f.loc, input: spoof(c) })
    }
    expect(await snapshot()).toBe(before)
    // Other text of any script is a name like any other.
    const ok = await call(w, f.method, f.path, { body: f.body('Ärger-مرحبا-日本') })
    expect(ok.status).toBeLessThan(300)
  })
})
