// Proves contract §3: login, cookies, throttling, forced password change, CSRF origin check, API tokens, expiry and the first admin.
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN_PW, call, testWorld } from '../helpers/app'
import { openDb } from '../../src/db/client'
import { sql } from '../../src/db/sql'
import { migrate } from '../../src/db/migrate'
import { loadConfig } from '../../src/config'
import { ManualClock } from '../../src/lib/clock'
import { Logger } from '../../src/lib/log'
import { bootstrap } from '../../src/features/users/bootstrap'
import { createApp } from '../../src/app'

type World = Awaited<ReturnType<typeof testWorld>>
const login = (w: World, username: string, password: string, headers: Record<string, string> = {}) =>
  call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username, password }, headers })
const cookieOf = (r: { headers: Headers }) => /saltdeck_session=([^;]*)/.exec(r.headers.get('set-cookie') ?? '')?.[1] ?? ''

describe('login', () => {
  test('returns the user summary and a session cookie with the contract flags', async () => {
    const w = await testWorld()
    const r = await login(w, 'admin', ADMIN_PW)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ username: 'admin', display_name: 'Administrator', must_change_pw: false, permissions: [{ verb: '*', resource_glob: '*' }] })
    const c = r.headers.get('set-cookie')!
    expect(c).toMatch(/saltdeck_session=[A-Za-z0-9_-]{43};/)
    expect(c).toContain('HttpOnly')
    expect(c).toContain('SameSite=Lax')
    expect(c).toContain('Path=/')
    expect(c).toContain('Max-Age=28800')
    expect(c).not.toContain('Secure')
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: cookieOf(r) } })).body.username).toBe('admin')
  })
  test('only the SHA-256 of the session token is stored', async () => {
    const w = await testWorld()
    const token = cookieOf(await login(w, 'admin', ADMIN_PW))
    const hashes = (await w.deps.db.rows<{ token_hash: string }>(sql`SELECT token_hash FROM sessions`)).map((r) => r.token_hash)
    expect(hashes).not.toContain(token)
    expect(hashes).toContain(new Bun.CryptoHasher('sha256').update(token).digest('hex'))
  })
  test('Secure is added with SALTDECK_COOKIE_SECURE', async () => {
    const w = await testWorld({ cookieSecure: true })
    expect((await login(w, 'admin', ADMIN_PW)).headers.get('set-cookie')).toContain('Secure')
  })
  test('usernames match case-insensitively', async () => {
    const w = await testWorld()
    expect((await login(w, 'ADMIN', ADMIN_PW)).status).toBe(200)
  })
  test('operator permissions are the union of its grants, sorted by verb then glob', async () => {
    const w = await testWorld()
    const r = await login(w, 'oper', 'password-123')
    expect(r.body.permissions).toEqual([
      { verb: 'accept', resource_glob: 'key:*' }, { verb: 'ack', resource_glob: 'alert:*' }, { verb: 'collect', resource_glob: 'inventory:*' }, { verb: 'delete', resource_glob: 'key:*' },
      { verb: 'execute', resource_glob: 'salt:*' }, { verb: 'kill', resource_glob: 'job:*' }, { verb: 'reject', resource_glob: 'key:*' },
      { verb: 'run', resource_glob: '*' }, { verb: 'view', resource_glob: '*' },
    ])
  })
  test.each([
    ['wrong password', 'admin', 'nope'],
    ['unknown user', 'ghost', 'whatever'],
  ])('%s is 401 Invalid credentials', async (_, u, p) => {
    const w = await testWorld()
    expect(await login(w, u, p)).toMatchObject({ status: 401, body: { detail: 'Invalid credentials' } })
  })
  test('an inactive user cannot log in and loses its sessions', async () => {
    const w = await testWorld()
    const id = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'view').id
    expect((await call(w, 'PATCH', `/api/users/${id}`, { body: { is_active: false } })).status).toBe(200)
    expect(await login(w, 'view', 'password-123')).toMatchObject({ status: 401, body: { detail: 'Invalid credentials' } })
    expect((await call(w, 'GET', '/api/auth/me', { who: 'viewer' })).status).toBe(401)
  })
  test('logins are audited, failed ones too', async () => {
    const w = await testWorld()
    await login(w, 'admin', 'bad')
    await login(w, 'admin', ADMIN_PW)
    const entries = (await call(w, 'GET', '/api/audit?action=auth.login')).body.entries
    expect(entries.map((e: any) => [e.username, e.ok])).toEqual([['admin', true], ['admin', false]])
    // Every sign-in says its source and outcome (contract §14).
    expect(entries.map((e: any) => e.detail)).toEqual(['source: local; outcome: success', 'Invalid credentials; source: local; outcome: invalid'])
  })
  test('unknown properties are ignored at login only', async () => {
    const w = await testWorld()
    expect((await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username: 'admin', password: ADMIN_PW, remember: true } })).status).toBe(200)
  })
})

describe('throttling', () => {
  test('parallel guesses are counted before the password check: at most 5 per username and 20 per client are tried', async () => {
    const w = await testWorld()
    const statuses = await Promise.all(Array.from({ length: 50 }, (_, i) => login(w, 'racer', `guess-${i}`)))
    expect(statuses.filter((r) => r.status === 401).length).toBe(5)
    expect(statuses.filter((r) => r.status === 429).length).toBe(45)
    const w2 = await testWorld()
    const many = await Promise.all(Array.from({ length: 60 }, (_, i) => login(w2, `racer-${i}`, 'guess')))
    expect(many.filter((r) => r.status === 401).length).toBe(20)
    expect(many.filter((r) => r.status === 429).length).toBe(40)
  })
  test('a success does not count against the client', async () => {
    const w = await testWorld()
    for (let i = 0; i < 25; i++) expect((await login(w, 'admin', ADMIN_PW)).status).toBe(200)
  })
  test('5 failures for one username give 429 with Retry-After until the window passes', async () => {
    const w = await testWorld()
    for (let i = 0; i < 5; i++) expect((await login(w, 'admin', 'bad')).status).toBe(401)
    const r = await login(w, 'admin', ADMIN_PW)
    expect(r).toMatchObject({ status: 429, body: { detail: 'Too many failed logins, retry later' } })
    expect(Number(r.headers.get('retry-after'))).toBe(900)
    w.clock.advance(10 * 60_000)
    expect(Number((await login(w, 'Admin', ADMIN_PW)).headers.get('retry-after'))).toBe(300)
    w.clock.advance(5 * 60_000 + 1)
    expect((await login(w, 'admin', ADMIN_PW)).status).toBe(200)
  })
  test('a success resets the username count', async () => {
    const w = await testWorld()
    for (let i = 0; i < 4; i++) await login(w, 'admin', 'bad')
    expect((await login(w, 'admin', ADMIN_PW)).status).toBe(200)
    for (let i = 0; i < 4; i++) expect((await login(w, 'admin', 'bad')).status).toBe(401)
    expect((await login(w, 'admin', ADMIN_PW)).status).toBe(200)
  })
  test('20 failures from one client across usernames give 429', async () => {
    const w = await testWorld()
    for (let i = 0; i < 20; i++) expect((await login(w, `user${i}`, 'bad')).status).toBe(401)
    expect((await login(w, 'admin', ADMIN_PW)).status).toBe(429)
  })
})

describe('sessions', () => {
  test('logout deletes the session and clears the cookie; 204 also without one', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    const r = await call(w, 'POST', '/api/auth/logout', { who: { cookie: c }, headers: { 'content-type': 'application/json' } })
    expect(r.status).toBe(204)
    expect(r.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: c } })).status).toBe(401)
    expect((await call(w, 'POST', '/api/auth/logout', { who: 'anon' })).status).toBe(204)
  })
  test('a cookie logout from a foreign Origin is 403 and the session lives on; a bodiless one from its own page works', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    expect(await call(w, 'POST', '/api/auth/logout', { who: { cookie: c }, headers: { origin: 'http://evil.example' } })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: c } })).status).toBe(200)
    expect((await call(w, 'POST', '/api/auth/logout', { who: { cookie: c }, headers: { origin: 'http://localhost' } })).status).toBe(204)
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: c } })).status).toBe(401)
  })
  test('a session ends after its 8-hour lifetime', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    w.clock.advance(8 * 3600_000 - 1)
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: c } })).status).toBe(200)
    w.clock.advance(1)
    expect(await call(w, 'GET', '/api/auth/me', { who: { cookie: c } })).toMatchObject({ status: 401, body: { detail: 'Not authenticated' } })
  })
  test('the session token also works as a Bearer token', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    expect((await call(w, 'GET', '/api/auth/me', { who: { token: c } })).status).toBe(200)
  })
})

describe('CSRF', () => {
  const put = (w: World, who: any, headers: Record<string, string>) => call(w, 'PUT', '/api/admin/settings/widget', { who, body: {}, headers })
  test('a cookie write with a foreign Origin is 403, with its own origin 200', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    expect(await put(w, { cookie: c }, { origin: 'http://evil.example' })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
    expect((await put(w, { cookie: c }, { origin: 'http://localhost' })).status).toBe(200)
    expect((await put(w, { cookie: c }, {})).status).toBe(200)
  })
  test('a cookie POST or DELETE with no body needs no Content-Type (curl -X POST -b jar)', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    const del = await call(w, 'DELETE', `/api/auth/tokens/00000000-0000-4000-8000-000000000000`, { who: { cookie: c } })
    expect(del).toMatchObject({ status: 404, body: { detail: 'Token not found' } })
    const saved = await call(w, 'POST', '/api/admin/settings/test-salt-saved', { who: { cookie: c } })
    expect(saved).toMatchObject({ status: 200, body: { ok: false, detail: 'Salt API not configured' } })
    // The origin check still applies to them.
    expect((await call(w, 'POST', '/api/admin/settings/test-salt-saved', { who: { cookie: c }, headers: { origin: 'http://evil.example' } })).status).toBe(403)
  })
  test('a cookie write with a body, or a PUT/PATCH, still needs a JSON Content-Type (415)', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    const text = await call(w, 'POST', '/api/auth/tokens', { who: { cookie: c }, raw: '{"name":"x"}', headers: { 'content-type': 'text/plain' } })
    expect(text).toMatchObject({ status: 415, body: { detail: 'Content-Type must be application/json' } })
    expect((await call(w, 'PUT', '/api/admin/settings/widget', { who: { cookie: c } })).status).toBe(415)
    expect((await call(w, 'POST', '/api/auth/tokens', { who: { cookie: c }, raw: '' , headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    expect((await call(w, 'GET', '/api/auth/tokens', { who: { cookie: c } })).body.tokens).toEqual([])
  })
  test("a cookie write from SALTDECK_PUBLIC_URL's origin (a proxy in front, maybe with a path) is accepted; others are 403", async () => {
    const w = await testWorld({ publicUrl: 'https://saltdeck.example.com/saltdeck/' })
    const c = cookieOf(await login(w, 'admin', ADMIN_PW))
    expect((await put(w, { cookie: c }, { origin: 'https://saltdeck.example.com' })).status).toBe(200)
    expect((await put(w, { cookie: c }, { origin: 'https://saltdeck.example.com:8443' })).status).toBe(403)
    expect((await put(w, { cookie: c }, { origin: 'http://localhost' })).status).toBe(200)
  })
  test('Bearer requests skip the origin check', async () => {
    const w = await testWorld()
    expect((await put(w, 'admin', { origin: 'http://evil.example' })).status).toBe(200)
  })
})

describe('forced password change', () => {
  async function world() {
    const w = await testWorld()
    const id = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'oper').id
    await call(w, 'POST', `/api/users/${id}/password`, { body: { new_password: 'temporary-pw-1' } })
    const c = cookieOf(await login(w, 'oper', 'temporary-pw-1'))
    return { w, c }
  }
  test('every route but me, change-password and logout answers 403 Password change required', async () => {
    const { w, c } = await world()
    const who = { cookie: c }
    expect((await call(w, 'GET', '/api/auth/me', { who })).body.must_change_pw).toBe(true)
    expect(await call(w, 'GET', '/api/minions', { who })).toMatchObject({ status: 403, body: { detail: 'Password change required' } })
    expect(await call(w, 'GET', '/api/activity', { who })).toMatchObject({ status: 403, body: { detail: 'Password change required' } })
  })
  test('change-password clears the flag, keeps this session and ends the others', async () => {
    const { w, c } = await world()
    const other = cookieOf(await login(w, 'oper', 'temporary-pw-1'))
    const cp = (body: unknown) => call(w, 'POST', '/api/auth/change-password', { who: { cookie: c }, body })
    expect(await cp({ current_password: 'wrong', new_password: 'brand-new-pw-2' })).toMatchObject({ status: 403, body: { detail: 'Current password is incorrect' } })
    expect((await cp({ current_password: 'temporary-pw-1', new_password: 'short' })).body.detail[0]).toMatchObject({ type: 'string_too_short', loc: ['body', 'new_password'] })
    expect((await cp({ current_password: 'temporary-pw-1', new_password: 'brand-new-pw-2' })).status).toBe(204)
    expect((await call(w, 'GET', '/api/minions', { who: { cookie: c } })).status).toBe(200)
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: other } })).status).toBe(401)
    expect((await login(w, 'oper', 'brand-new-pw-2')).body.must_change_pw).toBe(false)
  })
  test('an own password change ends every other session and every API token of the user, and keeps this session', async () => {
    const w = await testWorld()
    const c = cookieOf(await login(w, 'oper', 'password-123'))
    const stolen = cookieOf(await login(w, 'oper', 'password-123'))
    // A token minted from the stolen session, and one the user made for a script: both must end.
    const minted: string = (await call(w, 'POST', '/api/auth/tokens', { who: { cookie: stolen }, body: { name: 'minted' } })).body.token
    const script: string = (await call(w, 'POST', '/api/auth/tokens', { who: { cookie: c }, body: { name: 'ci' } })).body.token
    expect((await call(w, 'GET', '/api/auth/me', { who: { token: minted } })).status).toBe(200)
    expect((await call(w, 'POST', '/api/auth/change-password', { who: { cookie: c }, body: { current_password: 'password-123', new_password: 'brand-new-pw-2' } })).status).toBe(204)
    for (const who of [{ token: minted }, { token: script }, { cookie: stolen }]) expect((await call(w, 'GET', '/api/auth/me', { who })).status).toBe(401)
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie: c } })).status).toBe(200)
    // Other users keep theirs.
    expect((await call(w, 'GET', '/api/auth/me', { who: 'viewer' })).status).toBe(200)
  })
  test('a new password equal to the username (any case) is refused', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/users', { body: { username: 'longusername', password: 'first-password', must_change_pw: false } })
    const c = cookieOf(await login(w, 'longusername', 'first-password'))
    const r = await call(w, 'POST', '/api/auth/change-password', { who: { cookie: c }, body: { current_password: 'first-password', new_password: 'LongUserName' } })
    expect(r.status).toBe(422)
    expect(r.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'new_password'] })
    expect((await login(w, 'longusername', 'first-password')).status).toBe(200)
  })
})

describe('API tokens', () => {
  test('create (shown once), use, list without secret, revoke', async () => {
    const w = await testWorld()
    const r = await call(w, 'POST', '/api/auth/tokens', { body: { name: 'ci script', expires_in_days: 2 } })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'ci script', expires_at: new Date(w.clock.now() + 2 * 86_400_000).toISOString() })
    expect(r.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect((await call(w, 'GET', '/api/auth/me', { who: { token: r.body.token } })).body.username).toBe('admin')
    const list = (await call(w, 'GET', '/api/auth/tokens')).body
    expect(list.total).toBe(1)
    expect(list.tokens[0]).not.toHaveProperty('token')
    expect((await call(w, 'DELETE', `/api/auth/tokens/${r.body.id}`)).status).toBe(204)
    expect((await call(w, 'GET', '/api/auth/me', { who: { token: r.body.token } })).status).toBe(401)
    expect((await call(w, 'DELETE', `/api/auth/tokens/${r.body.id}`)).body).toEqual({ detail: 'Token not found' })
  })
  test('a token expires', async () => {
    const w = await testWorld()
    const t = (await call(w, 'POST', '/api/auth/tokens', { body: { name: 't', expires_in_days: 1 } })).body.token
    w.clock.advance(86_400_000)
    expect((await call(w, 'GET', '/api/auth/me', { who: { token: t } })).status).toBe(401)
  })
  test("one user cannot revoke another's token", async () => {
    const w = await testWorld()
    const t = (await call(w, 'POST', '/api/auth/tokens', { who: 'viewer', body: { name: 'mine' } })).body
    expect((await call(w, 'DELETE', `/api/auth/tokens/${t.id}`)).status).toBe(404)
    expect((await call(w, 'GET', '/api/auth/me', { who: { token: t.token } })).status).toBe(200)
  })
})

describe('first start', () => {
  const fresh = async (adminPassword: string | null) => {
    const dir = mkdtempSync(join(tmpdir(), 'sd-boot-'))
    const db = openDb(':memory:')
    await migrate(db)
    const deps = { db, config: loadConfig({}, { passwordMemoryKib: 256, adminPassword }), clock: new ManualClock(), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) }
    const printed: string[] = []
    await bootstrap(deps, dir, (l) => printed.push(l))
    return { dir, deps, printed, app: createApp(deps) }
  }
  test('without SALTDECK_ADMIN_PASSWORD: a random 20-char password, printed once and written 0600, must change', async () => {
    const a = await fresh(null)
    const pw = readFileSync(join(a.dir, 'initial-admin-password'), 'utf8').trim()
    expect(pw).toMatch(/^[A-Za-z0-9]{20}$/)
    expect(statSync(join(a.dir, 'initial-admin-password')).mode & 0o777).toBe(0o600)
    expect(a.printed.join('\n')).toContain(pw)
    const b = await fresh(null)
    expect(readFileSync(join(b.dir, 'initial-admin-password'), 'utf8').trim()).not.toBe(pw)
    const r = await a.app.handle(new Request('http://localhost/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: pw }) }))
    expect(((await r.json()) as any).must_change_pw).toBe(true)
  })
  test('with SALTDECK_ADMIN_PASSWORD: that password, no file, no forced change', async () => {
    const a = await fresh('from-env-password')
    expect(() => readFileSync(join(a.dir, 'initial-admin-password'))).toThrow()
    const r = await a.app.handle(new Request('http://localhost/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'from-env-password' }) }))
    expect(await r.json()).toMatchObject({ username: 'admin', must_change_pw: false })
  })
  test('a second start creates nothing new and repairs built-in grants', async () => {
    const a = await fresh('pw-pw-pw-pw')
    await a.deps.db.exec(sql`DELETE FROM role_permissions WHERE role_id = (SELECT id FROM roles WHERE name = 'viewer')`)
    await bootstrap(a.deps, a.dir, () => {})
    expect(await a.deps.db.row(sql`SELECT count(*) AS n FROM users`)).toEqual({ n: 1 })
    expect(await a.deps.db.row(sql`SELECT count(*) AS n FROM role_permissions p JOIN roles r ON r.id = p.role_id WHERE r.name = 'viewer'`)).toEqual({ n: 7 })
  })
})

describe('authentication cache', () => {
  test('a change written by another process (the CLI) takes effect on the next request', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sd-authcache-')), 'db.sqlite')
    const open = async () => {
      const db = openDb(file)
      await migrate(db)
      return { db, config: loadConfig({}, { passwordMemoryKib: 256, adminPassword: 'pw-pw-pw-pw' }), clock: new ManualClock(), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) }
    }
    const a = await open()
    await bootstrap(a, null, () => {})
    const app = createApp(a)
    const res = await app.handle(new Request('http://localhost/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'pw-pw-pw-pw' }) }))
    const token = res.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
    const me = () => app.handle(new Request('http://localhost/api/roles', { headers: { authorization: `Bearer ${token}` } })).then((r) => r.status)
    expect(await me()).toBe(200)
    expect(await me()).toBe(200)
    const other = await open()
    await other.db.exec(sql`DELETE FROM user_roles WHERE user_id = (SELECT id FROM users WHERE username = 'admin')`)
    expect(await me()).toBe(403)
    expect(await me()).toBe(403)
    // A process of its own (what the CLI is): the service reads auth_version again only after a commit, which it learns
    // of from the WAL index (db/commit-epoch.ts), so a commit by another process must be seen there.
    const cli = Bun.spawnSync(['bun', '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(file)}); d.run("UPDATE users SET is_active = 0 WHERE username = 'admin'"); d.close()`])
    expect(cli.exitCode).toBe(0)
    expect(await me()).toBe(401)
  })
})

describe('tightened defaults', () => {
  test('at most 100 live API tokens per user; past that 409 until one is revoked or expires', async () => {
    const w = await testWorld()
    const ids: string[] = []
    for (let i = 0; i < 100; i++) ids.push((await call(w, 'POST', '/api/auth/tokens', { body: { name: `t${i}`, expires_in_days: i === 0 ? 1 : null } })).body.id)
    expect(await call(w, 'POST', '/api/auth/tokens', { body: { name: 'one too many' } })).toMatchObject({ status: 409, body: { detail: 'Too many API tokens (100); revoke one first' } })
    expect((await call(w, 'DELETE', `/api/auth/tokens/${ids[5]}`)).status).toBe(204)
    expect((await call(w, 'POST', '/api/auth/tokens', { body: { name: 'fits again' } })).status).toBe(201)
    w.clock.advance(86_400_001)
    // The session itself expired meanwhile (8 h): a new login, and the expired token has made room.
    const cookie = cookieOf(await login(w, 'admin', ADMIN_PW))
    expect((await call(w, 'POST', '/api/auth/tokens', { who: { cookie }, headers: { 'content-type': 'application/json' }, body: { name: 'the expired one made room' } })).status).toBe(201)
  })
  test('the initial-admin-password file goes once the admin has changed that password (and at the next start)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saltdeck-initpw-'))
    const db = openDb(':memory:')
    await migrate(db)
    const deps = { db, config: loadConfig({}, { dataDir: dir, passwordMemoryKib: 256 }), clock: new ManualClock(), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) }
    let line = ''
    await bootstrap(deps, dir, (l) => (line = l))
    const file = join(dir, 'initial-admin-password')
    const first = readFileSync(file, 'utf8').trim()
    expect(line).toContain(first)
    const w = { app: createApp(deps), deps, clock: deps.clock, tokens: {} as any, roleId: () => '' }
    const cookie = cookieOf(await login(w as any, 'admin', first))
    expect((await call(w as any, 'POST', '/api/auth/change-password', { who: { cookie }, body: { current_password: first, new_password: 'a-new-admin-pass' } })).status).toBe(204)
    expect(existsSync(file)).toBe(false)
    // A file left behind by an older version goes at the next start.
    writeFileSync(file, 'stale\n')
    await bootstrap(deps, dir, () => {})
    expect(existsSync(file)).toBe(false)
    rmSync(dir, { recursive: true, force: true })
  })
})
