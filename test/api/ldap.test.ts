// LDAP sign-in (contract §14) against a real OpenLDAP: Debian's slapd, started here with its own config and data.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Attribute, Change, Client } from 'ldapts'
import { call, testWorld } from '../helpers/app'
import { ROOT_DN, ROOT_PW, startSlapd, type Slapd } from '../helpers/slapd'
import { Logger } from '../../src/lib/log'
import { ldapAuthenticate } from '../../src/features/identity/ldap'
import { providerConfig } from '../../src/features/identity/service'

let dir: Slapd
beforeAll(async () => {
  dir = await startSlapd()
}, 60_000)
afterAll(async () => {
  await dir?.cleanup()
})

const SVC = { bind_dn: 'cn=saltdeck,ou=services,dc=example,dc=org', bind_password: 'service-pass-1' }
const BASES = { user_base: 'ou=people,dc=example,dc=org', group_base: 'ou=groups,dc=example,dc=org' }

/** A world with LDAP enabled (StartTLS trusting the test's certificate unless `ldap` says otherwise), ops → operator, and its log lines. */
async function ldapWorld(ldap: Record<string, unknown> = {}) {
  const w = await testWorld()
  const lines: string[] = []
  w.deps.log = new Logger('json', (l) => lines.push(l))
  const put = await call(w, 'PUT', '/api/admin/identity/ldap', { body: { enabled: true, url: dir.url, start_tls: true, ca_cert: dir.cert, ...SVC, ...BASES, ...ldap } })
  expect(put.status).toBe(200)
  expect((await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'ldap', group: 'cn=ops,ou=groups,dc=example,dc=org', role_id: w.roleId('operator') } })).status).toBe(201)
  const login = (username: string, password: string) => call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username, password } })
  const refusals = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'sign-in refused')
  return { w, lines, login, refusals }
}

/** Changes the directory as its root (what an operator of the directory would do). */
async function asRoot(fn: (c: Client) => Promise<void>) {
  const c = new Client({ url: dir.url })
  await c.bind(ROOT_DN, ROOT_PW)
  try {
    await fn(c)
  } finally {
    await c.unbind()
  }
}

describe('LDAP sign-in against slapd', () => {
  test('the right password signs in as a directory user with its mapped role and display name', async () => {
    const { w, login } = await ldapWorld()
    const r = await login('alice', 'alice-pass-1')
    expect(r).toMatchObject({ status: 200, body: { username: 'alice', display_name: 'Alice Anders' } })
    expect(r.headers.get('set-cookie')).toContain('saltdeck_session=')
    const alice = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'alice')
    expect(alice).toMatchObject({ source: 'ldap', roles: [{ name: 'operator' }] })
    const audit = (await call(w, 'GET', '/api/audit?action=auth.login')).body.entries[0]
    expect(audit).toMatchObject({ username: 'alice', ok: true, detail: 'source: ldap; outcome: success' })
  })

  test.each([
    ['a wrong password', 'alice', 'not-her-password', 'wrong password'],
    ['an unknown user', 'mallory', 'whatever-1', 'unknown user'],
    ['an injection in the user name', '*)(uid=*', 'alice-pass-1', 'unknown user'],
    // Unescaped, (uid=al*) would find alice and her password would open her account under another name.
    ['a wildcard in the user name', 'al*', 'alice-pass-1', 'unknown user'],
  ])('%s is 401 Invalid credentials, and the log says why', async (_, username, password, reason) => {
    const { w, login, refusals, lines } = await ldapWorld()
    expect(await login(username, password)).toMatchObject({ status: 401, body: { detail: 'Invalid credentials' } })
    expect(refusals().at(-1)).toMatchObject({ source: 'ldap', outcome: 'invalid', reason })
    // Neither the password tried nor the service account's appears in the log or the audit log.
    const audit = JSON.stringify((await call(w, 'GET', '/api/audit')).body)
    for (const secret of [password, SVC.bind_password]) expect({ log: lines.join('\n').includes(secret), audit: audit.includes(secret) }).toEqual({ log: false, audit: false })
    expect((await call(w, 'GET', '/api/users')).body.users.some((u: any) => u.source === 'ldap')).toBe(false)
  })

  test('an empty password is never a bind: 422 at the API, and refused before any bind below it', async () => {
    const { w, login } = await ldapWorld()
    expect((await login('alice', '')).status).toBe(422)
    // slapd takes an empty simple bind as an anonymous one; the sign-in must not get that far.
    const r = await ldapAuthenticate(w.deps, await providerConfig(w.deps, 'ldap'), 'alice', '')
    expect(r).toEqual({ ok: false, outcome: 'invalid', reason: 'empty password (never bound)' })
  })

  test('a user in no mapped group is 403 No Saltdeck role for this account, with no session', async () => {
    const { w, login } = await ldapWorld()
    const r = await login('bob', 'bob-pass-1')
    expect(r).toMatchObject({ status: 403, body: { detail: 'No Saltdeck role for this account' } })
    expect(r.headers.get('set-cookie') ?? '').not.toContain('saltdeck_session=')
    const audit = (await call(w, 'GET', '/api/audit?action=auth.login')).body.entries[0]
    expect(audit).toMatchObject({ username: 'bob', ok: false, detail: 'No Saltdeck role for this account; source: ldap; outcome: no_role' })
  })

  test('a group added in the directory shows at the next sign-in; one taken away goes too', async () => {
    const { w, login } = await ldapWorld()
    await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'ldap', group: 'readers', role_id: w.roleId('viewer') } })
    expect((await login('bob', 'bob-pass-1')).status).toBe(403)
    const bobDn = 'uid=bob,ou=people,dc=example,dc=org'
    await asRoot((c) => c.modify('cn=readers,ou=groups,dc=example,dc=org', new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [bobDn] }) })))
    try {
      expect((await login('bob', 'bob-pass-1')).status).toBe(200)
      const bob = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'bob')
      expect(bob.roles.map((r: any) => r.name)).toEqual(['viewer'])
    } finally {
      await asRoot((c) => c.modify('cn=readers,ou=groups,dc=example,dc=org', new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [bobDn] }) })))
    }
    expect((await login('bob', 'bob-pass-1')).status).toBe(403)
    const bob = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'bob')
    expect(bob.roles).toEqual([])
  })

  test('a local user of the same name is tried first; the directory never speaks for it', async () => {
    const { login, refusals } = await ldapWorld()
    // The directory holds uid=admin with another password: it opens nothing here.
    expect((await login('admin', 'directory-admin-pass-1')).status).toBe(401)
    expect(refusals().at(-1)).toMatchObject({ source: 'local', reason: 'wrong password' })
  })

  test('the directory down: 401 Invalid credentials, the log says why, and the local admin still signs in', async () => {
    const { login, refusals } = await ldapWorld()
    await dir.stop()
    try {
      expect(await login('alice', 'alice-pass-1')).toMatchObject({ status: 401, body: { detail: 'Invalid credentials' } })
      expect(refusals().at(-1)).toMatchObject({ source: 'ldap', outcome: 'unavailable', reason: 'directory unreachable: connection refused' })
      expect((await login('admin', 'admin-password-1')).status).toBe(200)
    } finally {
      await dir.start()
    }
  })

  test('StartTLS checks the certificate: a self-signed one without its CA is refused; with ca_cert it works; verify off trusts any', async () => {
    const untrusted = await ldapWorld({ ca_cert: '' })
    expect((await untrusted.login('alice', 'alice-pass-1')).status).toBe(401)
    expect(untrusted.refusals().at(-1)).toMatchObject({ outcome: 'unavailable', reason: "directory unreachable: its TLS certificate was not accepted" })
    expect((await call(untrusted.w, 'POST', '/api/admin/identity/ldap/test')).body).toEqual({ ok: false, detail: 'Cannot connect: directory unreachable: its TLS certificate was not accepted' })
    const trusted = await ldapWorld()
    expect((await trusted.login('alice', 'alice-pass-1')).status).toBe(200)
    expect((await call(trusted.w, 'POST', '/api/admin/identity/ldap/test')).body).toMatchObject({ ok: true })
    const unverified = await ldapWorld({ ca_cert: '', verify_tls: false })
    expect((await unverified.login('alice', 'alice-pass-1')).status).toBe(200)
  })

  test('LDAPS with the CA works too', async () => {
    const { login } = await ldapWorld({ url: dir.ldapsUrl, ca_cert: dir.cert, ...SVC })
    expect((await login('alice', 'alice-pass-1')).status).toBe(200)
  })

  test('the test button names a refused service account without its password', async () => {
    const { w } = await ldapWorld({ bind_password: 'wrong-service-pass' })
    const r = (await call(w, 'POST', '/api/admin/identity/ldap/test')).body
    expect(r).toEqual({ ok: false, detail: 'The service account was refused: check bind_dn and bind_password' })
  })
})
