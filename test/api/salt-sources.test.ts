// Proves contract §15 "Several masters", the list of salt sources: CRUD, `default` as the salt settings section, validation, secrets and audit.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { decrypt } from '../../src/lib/secret'
import { Logger } from '../../src/lib/log'
import { sql } from '../../src/db/sql'
import { sourceCredentials } from '../../src/features/salt-sources/service'

const PW = 'm4ster-two-s3cret'
const EAST = { name: 'east', url: 'https://salt-east.example:8000', username: 'saltdeck', password: PW, eauth: 'sharedsecret', verify: false }
/** A world whose log lines are kept, to prove the password never reaches one. */
async function world() {
  const w = await testWorld()
  const lines: string[] = []
  w.deps.log = new Logger('json', (l) => lines.push(l))
  return { w, lines }
}
const auditOf = async (w: Awaited<ReturnType<typeof testWorld>>, action: string) => (await call(w, 'GET', `/api/audit?action=${action}`)).body.entries

describe('salt sources', () => {
  test('a fresh install lists only default, which is the salt settings section', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.1:8000', username: 'u', password: 'p' } })
    const settings = (await call(w, 'GET', '/api/admin/settings')).body
    const r = await call(w, 'GET', '/api/admin/salt-sources')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ sources: [{ name: 'default', ...settings.salt, updated_at: settings.updated_at }] })
    expect(r.body.sources[0].password_set).toBe(true)
  })

  test('a source is added with its password encrypted, never answered, logged or audited', async () => {
    const { w, lines } = await world()
    const r = await call(w, 'POST', '/api/admin/salt-sources', { body: EAST })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({ name: 'east', url: EAST.url, username: 'saltdeck', password_set: true, verify: false, eauth: 'sharedsecret', presence_method: 'present', updated_at: new Date(w.clock.now()).toISOString() })
    const row = (await w.deps.db.row<{ value: string }>(sql`SELECT value FROM salt_sources WHERE name = 'east'`))!
    expect(row.value).not.toContain(PW)
    expect(decrypt(w.deps.secretKey, JSON.parse(row.value).password_enc)).toBe(PW)
    expect((await sourceCredentials(w.deps, 'east'))!.password).toBe(PW)
    const list = await call(w, 'GET', '/api/admin/salt-sources')
    const one = await call(w, 'GET', '/api/admin/salt-sources/east')
    expect(one.body).toEqual(r.body)
    const audit = await auditOf(w, 'salt_source.create')
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ target: 'east', ok: true })
    expect(audit[0].detail).toContain('password')
    for (const text of [JSON.stringify(r.body), JSON.stringify(list.body), JSON.stringify(one.body), JSON.stringify(audit), lines.join('\n')]) expect(text).not.toContain(PW)
  })

  test('the list is default first, then by name', async () => {
    const w = await testWorld()
    for (const name of ['zulu', 'alpha-2', 'east']) expect((await call(w, 'POST', '/api/admin/salt-sources', { body: { name, url: 'http://127.0.0.1:8001' } })).status).toBe(201)
    expect((await call(w, 'GET', '/api/admin/salt-sources')).body.sources.map((s: any) => s.name)).toEqual(['default', 'alpha-2', 'east', 'zulu'])
  })

  test('a name is taken once, and default is always taken', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/admin/salt-sources', { body: EAST })
    const again = await call(w, 'POST', '/api/admin/salt-sources', { body: { ...EAST, url: 'http://127.0.0.1:9000' } })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ detail: 'Salt source name already exists' })
    expect((await sourceCredentials(w.deps, 'east'))!.url).toBe(EAST.url)
    const dflt = await call(w, 'POST', '/api/admin/salt-sources', { body: { name: 'default', url: 'http://127.0.0.1:9000' } })
    expect(dflt.status).toBe(409)
    expect(dflt.body).toEqual({ detail: 'Salt source name already exists' })
    expect((await call(w, 'GET', '/api/admin/settings')).body.salt.url).toBeNull()
  })

  test('names are 1..64 of [a-z0-9-]; a URL and a name are required; nothing else is accepted; the password is never echoed', async () => {
    const w = await testWorld()
    const post = (body: unknown) => call(w, 'POST', '/api/admin/salt-sources', { body })
    const bad = await post({ name: 'East_1', url: 'ftp://x', password: PW, port: 1 })
    expect(bad.status).toBe(422)
    const byLoc = Object.fromEntries(bad.body.detail.map((d: any) => [d.loc.join('.'), d]))
    expect(byLoc['body.name']).toMatchObject({ type: 'string_pattern_mismatch', input: 'East_1', ctx: { pattern: '^[a-z0-9-]+$' } })
    expect(byLoc['body.url'].type).toBe('url_scheme')
    expect(byLoc['body.port'].type).toBe('extra_forbidden')
    expect(JSON.stringify(bad.body)).not.toContain(PW)
    const long = await post({ name: 'a'.repeat(65), url: 'http://127.0.0.1:8000' })
    expect(long.body.detail).toEqual([{ type: 'string_too_long', loc: ['body', 'name'], msg: 'String should have at most 64 characters', input: 'a'.repeat(65), ctx: { max_length: 64 } }])
    const empty = await post({ name: '', url: 'http://127.0.0.1:8000' })
    expect(empty.body.detail[0]).toMatchObject({ type: 'string_too_short', loc: ['body', 'name'] })
    const missing = await post({ password: PW })
    expect(missing.status).toBe(422)
    expect(missing.body.detail.map((d: any) => [d.type, d.loc.join('.')])).toEqual([['missing', 'body.name'], ['missing', 'body.url']])
    expect(JSON.stringify(missing.body)).not.toContain(PW)
    const path = await call(w, 'GET', '/api/admin/salt-sources/East')
    expect(path.status).toBe(422)
    expect(path.body.detail[0]).toMatchObject({ type: 'string_pattern_mismatch', loc: ['path', 'name'], input: 'East' })
    expect((await call(w, 'GET', '/api/admin/salt-sources')).body.sources).toHaveLength(1)
  })

  test('a partial update changes what it names; {} is refused as the salt section refuses it; a name cannot change', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/admin/salt-sources', { body: EAST })
    const r = await call(w, 'PUT', '/api/admin/salt-sources/east', { body: { username: 'other', eauth: null } })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'east', url: EAST.url, username: 'other', password_set: true, eauth: 'sharedsecret', verify: false })
    const none = await call(w, 'PUT', '/api/admin/salt-sources/east', { body: {} })
    expect(none.status).toBe(422)
    expect(none.body.detail).toEqual([{ type: 'value_error', loc: ['body'], msg: 'Value error, at least one salt field must be provided', input: {}, ctx: { error: {} } }])
    const rename = await call(w, 'PUT', '/api/admin/salt-sources/east', { body: { name: 'west' } })
    expect(rename.status).toBe(422)
    expect(rename.body.detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'name'] })
    const missing = await call(w, 'PUT', '/api/admin/salt-sources/west', { body: { verify: true } })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ detail: 'Salt source not found' })
    const audit = await auditOf(w, 'salt_source.update')
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ target: 'east', detail: 'changed: username' })
  })

  test('a secret never follows a changed URL: a new URL without a password clears it, with one keeps the new one', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/admin/salt-sources', { body: EAST })
    // The same address written differently is not a move.
    expect((await call(w, 'PUT', '/api/admin/salt-sources/east', { body: { url: 'https://SALT-EAST.example:8000/' } })).body.password_set).toBe(true)
    const moved = await call(w, 'PUT', '/api/admin/salt-sources/east', { body: { url: 'https://elsewhere.example:8000' } })
    expect(moved.body).toMatchObject({ url: 'https://elsewhere.example:8000', password_set: false })
    expect((await sourceCredentials(w.deps, 'east'))!.password).toBeNull()
    const given = await call(w, 'PUT', '/api/admin/salt-sources/east', { body: { url: 'https://third.example:8000', password: 'new-one' } })
    expect(given.body.password_set).toBe(true)
    expect((await sourceCredentials(w.deps, 'east'))!.password).toBe('new-one')
  })

  test('default is read and written as the salt settings section, both ways, and cannot be deleted', async () => {
    const w = await testWorld()
    const seen: string[] = []
    w.deps.onSettingsChanged = (s) => seen.push(s)
    const r = await call(w, 'PUT', '/api/admin/salt-sources/default', { body: { url: 'http://127.0.0.1:8000', username: 'u', password: PW } })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'default', url: 'http://127.0.0.1:8000', username: 'u', password_set: true })
    expect(JSON.stringify(r.body)).not.toContain(PW)
    expect(seen).toEqual(['salt'])
    const settings = (await call(w, 'GET', '/api/admin/settings')).body
    expect(settings.salt).toEqual({ url: 'http://127.0.0.1:8000', username: 'u', password_set: true, verify: true, eauth: 'pam', presence_method: 'present' })
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.2:8000' } })
    expect((await call(w, 'GET', '/api/admin/salt-sources/default')).body).toMatchObject({ url: 'http://127.0.0.2:8000', password_set: false })
    const del = await call(w, 'DELETE', '/api/admin/salt-sources/default')
    expect(del.status).toBe(409)
    expect(del.body).toEqual({ detail: 'Cannot delete the default salt source' })
    expect((await call(w, 'GET', '/api/admin/salt-sources/default')).status).toBe(200)
    expect(await w.deps.db.rows(sql`SELECT name FROM salt_sources`)).toEqual([])
  })

  test('a source is deleted once; the change hook names each change of a source beyond default', async () => {
    const w = await testWorld()
    const seen: string[] = []
    w.deps.onSaltSourceChanged = (n) => seen.push(n)
    await call(w, 'POST', '/api/admin/salt-sources', { body: EAST })
    await call(w, 'PUT', '/api/admin/salt-sources/east', { body: { verify: true } })
    expect((await call(w, 'DELETE', '/api/admin/salt-sources/east')).status).toBe(204)
    const again = await call(w, 'DELETE', '/api/admin/salt-sources/east')
    expect(again.status).toBe(404)
    expect(again.body).toEqual({ detail: 'Salt source not found' })
    expect((await call(w, 'GET', '/api/admin/salt-sources/east')).status).toBe(404)
    expect(seen).toEqual(['east', 'east', 'east'])
    expect((await auditOf(w, 'salt_source.delete')).map((e: any) => [e.target, e.ok])).toEqual([['east', true]])
  })

  test('the OpenAPI document describes the routes, the password write-only', async () => {
    const w = await testWorld()
    const doc = (await call(w, 'GET', '/api/openapi.json')).body
    expect(Object.keys(doc.paths['/api/admin/salt-sources']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/api/admin/salt-sources/{name}']).sort()).toEqual(['delete', 'get', 'put'])
    const body = JSON.stringify(doc.paths['/api/admin/salt-sources'].post)
    expect(body).toContain('"writeOnly":true')
    expect(JSON.stringify(doc.paths['/api/admin/salt-sources/{name}'].get)).toContain('password_set')
  })
})
