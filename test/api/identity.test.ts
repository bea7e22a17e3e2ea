// Identity settings, group → role mappings and the provider-neutral directory sign-in (contract §14).
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { signInDirectoryUser } from '../../src/features/identity/signin'
import { sql } from '../../src/db/sql'

const SECRET = 'svc-secret-do-not-leak'

describe('identity settings', () => {
  test('defaults; a secret is stored encrypted, answered only as *_set, never in the audit log', async () => {
    const w = await testWorld()
    const first = await call(w, 'GET', '/api/admin/identity')
    expect(first.status).toBe(200)
    expect(first.body.ldap).toMatchObject({ enabled: false, url: null, start_tls: true, verify_tls: true, user_filter: '(uid={username})', group_filter: '(member={dn})', display_name_attr: 'cn', bind_password_set: false })
    expect(first.body.oidc).toMatchObject({ enabled: false, scopes: 'openid profile email groups', username_claim: 'preferred_username', groups_claim: 'groups', client_secret_set: false })
    const put = await call(w, 'PUT', '/api/admin/identity/ldap', { body: { url: 'ldap://127.0.0.1:3890', bind_dn: 'cn=svc,dc=example,dc=org', bind_password: SECRET, user_base: 'ou=people,dc=example,dc=org' } })
    expect(put.status).toBe(200)
    expect(put.body.ldap).toMatchObject({ url: 'ldap://127.0.0.1:3890', bind_password_set: true })
    expect(JSON.stringify(put.body)).not.toContain(SECRET)
    expect(JSON.stringify((await call(w, 'GET', '/api/admin/identity')).body)).not.toContain(SECRET)
    const stored = (await w.deps.db.row<{ value: string }>(sql`SELECT value FROM identity_providers WHERE provider = 'ldap'`))!.value
    expect(stored).not.toContain(SECRET)
    expect(JSON.parse(stored).bind_password_enc).toBeString()
    const audit = (await call(w, 'GET', '/api/audit?action=identity.ldap')).body.entries
    expect(audit[0]).toMatchObject({ username: 'admin', target: 'ldap', detail: 'changed: url, bind_dn, bind_password, user_base' })
    expect(JSON.stringify(audit)).not.toContain(SECRET)
    const oidc = await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer: 'https://id.example.org/realms/ops', client_id: 'saltdeck', client_secret: SECRET, display_name: 'Keycloak' } })
    expect(oidc.body.oidc).toMatchObject({ issuer: 'https://id.example.org/realms/ops', client_id: 'saltdeck', client_secret_set: true, display_name: 'Keycloak' })
    expect(JSON.stringify(oidc.body)).not.toContain(SECRET)
  })

  test('a new url without a new password forgets the stored one; "" forgets it too', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/admin/identity/ldap', { body: { url: 'ldap://127.0.0.1:3890', bind_password: SECRET } })
    expect((await call(w, 'PUT', '/api/admin/identity/ldap', { body: { url: 'ldap://127.0.0.1:3890/' } })).body.ldap.bind_password_set).toBe(true)
    expect((await call(w, 'PUT', '/api/admin/identity/ldap', { body: { url: 'ldap://127.0.0.2:3890' } })).body.ldap.bind_password_set).toBe(false)
    await call(w, 'PUT', '/api/admin/identity/ldap', { body: { bind_password: SECRET } })
    expect((await call(w, 'PUT', '/api/admin/identity/ldap', { body: { bind_password: '' } })).body.ldap.bind_password_set).toBe(false)
  })

  test('bad input is 422 and changes nothing: enabling without a url, a non-LDAP url, a bad CA, a metadata address', async () => {
    const w = await testWorld()
    const before = (await call(w, 'GET', '/api/admin/identity')).body
    for (const body of [{ enabled: true }, { url: 'http://dir.example.org' }, { ca_cert: 'not a certificate' }, { url: 'ldap://169.254.169.254' }, { user_filter: '' }]) {
      const r = await call(w, 'PUT', '/api/admin/identity/ldap', { body })
      expect(r.status).toBe(422)
    }
    expect((await call(w, 'PUT', '/api/admin/identity/oidc', { body: { enabled: true } })).status).toBe(422)
    expect((await call(w, 'GET', '/api/admin/identity')).body).toEqual(before)
  })

  test('a test without settings says what is missing and contacts nothing', async () => {
    const w = await testWorld()
    expect((await call(w, 'POST', '/api/admin/identity/ldap/test')).body).toEqual({ ok: false, detail: 'No LDAP url configured' })
    expect((await call(w, 'POST', '/api/admin/identity/oidc/test')).body).toEqual({ ok: false, detail: 'No issuer configured' })
  })

  test('the oidc test reads the discovery document of a real HTTP server', async () => {
    const w = await testWorld()
    let issuer = ''
    const srv = Bun.serve({
      port: 0, hostname: '127.0.0.1',
      fetch: (req) => {
        const path = new URL(req.url).pathname
        if (path === '/realms/ops/.well-known/openid-configuration') return Response.json({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/certs` })
        if (path === '/realms/ops/certs') return Response.json({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }] })
        return new Response('no', { status: 404 })
      },
    })
    try {
      issuer = `http://127.0.0.1:${srv.port}/realms/ops`
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer } })
      expect((await call(w, 'POST', '/api/admin/identity/oidc/test')).body).toMatchObject({ ok: true })
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer: `http://127.0.0.1:${srv.port}/realms/other` } })
      expect((await call(w, 'POST', '/api/admin/identity/oidc/test')).body).toEqual({ ok: false, detail: 'The discovery document answered HTTP 404' })
    } finally {
      srv.stop(true)
    }
  })
})

describe('group → role mappings', () => {
  test('create, list, refuse duplicates and unknown roles, delete; every change audited', async () => {
    const w = await testWorld()
    const op = w.roleId('operator')
    const made = await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'ldap', group: 'cn=ops,ou=groups,dc=example,dc=org', role_id: op } })
    expect(made).toMatchObject({ status: 201, body: { provider: 'ldap', group: 'cn=ops,ou=groups,dc=example,dc=org', role_id: op, role_name: 'operator' } })
    // LDAP names ignore case: the same DN in capitals is the same mapping.
    expect((await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'ldap', group: 'CN=ops,ou=groups,dc=example,dc=org', role_id: op } })).status).toBe(409)
    expect((await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'oidc', group: 'ops', role_id: op } })).status).toBe(201)
    expect((await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'oidc', group: 'ops', role_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(422)
    expect((await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'saml', group: 'ops', role_id: op } })).status).toBe(422)
    const list = (await call(w, 'GET', '/api/admin/identity/mappings')).body
    expect(list.total).toBe(2)
    expect((await call(w, 'DELETE', `/api/admin/identity/mappings/${made.body.id}`)).status).toBe(204)
    expect((await call(w, 'DELETE', `/api/admin/identity/mappings/${made.body.id}`)).status).toBe(404)
    const actions = (await call(w, 'GET', '/api/audit')).body.entries.map((e: any) => e.action)
    expect(actions.filter((a: string) => a.startsWith('identity.mapping'))).toEqual(['identity.mapping.delete', 'identity.mapping.create', 'identity.mapping.create'])
  })
})

describe('directory sign-in (provider-neutral)', () => {
  test('creates the user with its source and exactly its mapped roles, replaced at every sign-in; no mapped group is 403 with no session', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'oidc', group: 'ops', role_id: w.roleId('operator') } })
    await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'oidc', group: 'readers', role_id: w.roleId('viewer') } })
    const a = await signInDirectoryUser(w.deps, { provider: 'oidc', username: 'carol', displayName: 'Carol C', groups: ['ops', 'unmapped'] }, '10.0.0.1')
    const me = await call(w, 'GET', '/api/auth/me', { who: { token: a.token } })
    expect(me.body).toMatchObject({ username: 'carol', display_name: 'Carol C' })
    const users = (await call(w, 'GET', '/api/users')).body.users
    const carol = users.find((u: any) => u.username === 'carol')
    expect(carol).toMatchObject({ source: 'oidc', roles: [{ name: 'operator' }] })
    expect(users.find((u: any) => u.username === 'admin').source).toBe('local')
    // OIDC groups are claims matched exactly: 'Readers' is not 'readers'.
    await signInDirectoryUser(w.deps, { provider: 'oidc', username: 'carol', displayName: 'Carol C', groups: ['readers', 'Ops'] }, '10.0.0.1')
    expect((await call(w, 'GET', `/api/users/${carol.id}`)).body.roles.map((r: any) => r.name)).toEqual(['viewer'])
    await expect(signInDirectoryUser(w.deps, { provider: 'oidc', username: 'carol', displayName: 'Carol C', groups: ['nothing'] }, '10.0.0.1')).rejects.toThrow('No Saltdeck role for this account')
    expect((await call(w, 'GET', `/api/users/${carol.id}`)).body.roles).toEqual([])
    const sessions = (await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM sessions WHERE user_id = ${carol.id}`))!.n
    expect(sessions).toBe(2)
    const audit = (await call(w, 'GET', '/api/audit?action=auth.login')).body.entries.map((e: any) => [e.username, e.ok, e.detail])
    expect(audit).toEqual([
      ['carol', false, 'No Saltdeck role for this account; source: oidc; outcome: no_role'],
      ['carol', true, 'source: oidc; outcome: success'],
      ['carol', true, 'source: oidc; outcome: success'],
    ])
    const metrics = (await call(w, 'GET', '/metrics', { who: { token: (await call(w, 'POST', '/api/auth/tokens', { body: { name: 'scrape' } })).body.token } })).body
    expect(metrics).toContain('saltdeck_sign_ins_total{provider="oidc",outcome="success"} 2')
    expect(metrics).toContain('saltdeck_sign_ins_total{provider="oidc",outcome="no_role"} 1')
  })

  test('a directory never takes over a local account of the same name', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'oidc', group: 'admins', role_id: w.roleId('admin') } })
    await expect(signInDirectoryUser(w.deps, { provider: 'oidc', username: 'ADMIN', displayName: 'x', groups: ['admins'] }, 'c')).rejects.toThrow('Invalid credentials')
    const admin = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'admin')
    expect(admin.source).toBe('local')
  })

  test('a directory user has no Saltdeck password: change-password and reset are 409', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'ldap', group: 'ops', role_id: w.roleId('operator') } })
    const s = await signInDirectoryUser(w.deps, { provider: 'ldap', username: 'dave', displayName: 'Dave', groups: ['ops'] }, 'c')
    const own = await call(w, 'POST', '/api/auth/change-password', { who: { token: s.token }, body: { current_password: 'anything-1', new_password: 'something-new-1' } })
    expect(own).toMatchObject({ status: 409, body: { detail: 'Password is managed by the directory' } })
    const reset = await call(w, 'POST', `/api/users/${s.userId}/password`, { body: { new_password: 'something-new-1' } })
    expect(reset).toMatchObject({ status: 409, body: { detail: 'Password is managed by the directory' } })
    // Nor can its empty password hash be used to log in locally.
    expect((await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username: 'dave', password: 'x' } })).status).toBe(401)
  })
})
