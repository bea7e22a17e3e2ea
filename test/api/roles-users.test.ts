// Proves the role and user lifecycles of contract §3-§4, with their conflicts, protections and audit entries.
import { describe, expect, test } from 'bun:test'
import { ADMIN_PW, call, testWorld } from '../helpers/app'

describe('roles', () => {
  test('create → read → patch → grant → use → revoke → delete', async () => {
    const w = await testWorld()
    const created = await call(w, 'POST', '/api/roles', { body: { name: '  Auditors  ' } })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/), name: 'Auditors', is_builtin: false, description: '' })
    const id = created.body.id
    expect((await call(w, 'PATCH', `/api/roles/${id}`, { body: { description: 'reads the audit log' } })).body.description).toBe('reads the audit log')
    expect((await call(w, 'PATCH', `/api/roles/${id}`, { body: { description: null } })).body.description).toBe('reads the audit log')
    expect((await call(w, 'PATCH', `/api/roles/${id}`, { body: {} })).status).toBe(200)
    const grant = await call(w, 'POST', `/api/roles/${id}/permissions`, { body: { verb: 'view', resource_glob: 'audit:*' } })
    expect(grant.status).toBe(201)
    expect((await call(w, 'POST', `/api/roles/${id}/permissions`, { body: { verb: 'view', resource_glob: 'audit:*' } })).status).toBe(409)
    const detail = (await call(w, 'GET', `/api/roles/${id}`)).body
    expect(detail.permissions).toEqual([{ id: grant.body.id, verb: 'view', resource_glob: 'audit:*', target_glob: '*' }])

    const nobodyId = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'nobody').id
    expect((await call(w, 'GET', '/api/audit', { who: 'nobody' })).status).toBe(403)
    expect((await call(w, 'PUT', `/api/users/${nobodyId}/roles`, { body: { role_ids: [id] } })).status).toBe(200)
    expect((await call(w, 'GET', '/api/audit', { who: 'nobody' })).status).toBe(200)
    expect((await call(w, 'DELETE', `/api/roles/${id}/permissions/${grant.body.id}`)).status).toBe(204)
    expect((await call(w, 'GET', '/api/audit', { who: 'nobody' })).status).toBe(403)

    expect((await call(w, 'DELETE', `/api/roles/${id}`)).status).toBe(204)
    expect(await call(w, 'GET', `/api/roles/${id}`)).toMatchObject({ status: 404, body: { detail: 'Role not found' } })
    expect((await call(w, 'GET', `/api/users/${nobodyId}/roles`)).body).toEqual({ total: 0, roles: [] })
    const actions = (await call(w, 'GET', '/api/audit')).body.entries.map((e: any) => e.action)
    expect(actions).toEqual(expect.arrayContaining(['role.create', 'role.update', 'role.grant', 'role.revoke', 'role.delete', 'user.set_roles']))
  })
  test('names are unique case-insensitively', async () => {
    const w = await testWorld()
    expect((await call(w, 'POST', '/api/roles', { body: { name: 'ops' } })).status).toBe(201)
    expect(await call(w, 'POST', '/api/roles', { body: { name: 'OPS' } })).toMatchObject({ status: 409, body: { detail: 'Role name already exists' } })
    expect((await call(w, 'POST', '/api/roles', { body: { name: 'Viewer' } })).status).toBe(409)
  })
  test.each([
    [{ name: '' }, 'string_too_short'],
    [{ name: '   ' }, 'string_too_short'],
    [{ name: 'x'.repeat(65) }, 'string_too_long'],
    [{ name: 'bad\u0007name' }, 'string_pattern_mismatch'],
    [{ name: 'ok', description: 'x'.repeat(256) }, 'string_too_long'],
    [{ name: 'ok', extra: 1 }, 'extra_forbidden'],
    [{}, 'missing'],
    [{ name: 7 }, 'string_type'],
  ])('POST /api/roles %p → %s', async (body, type) => {
    const w = await testWorld()
    const r = await call(w, 'POST', '/api/roles', { body })
    expect(r.status).toBe(422)
    expect(r.body.detail[0].type).toBe(type)
    expect((await call(w, 'GET', '/api/roles')).body.total).toBe(3)
  })
  test('bounds that pass: 64-char name, 255-char description', async () => {
    const w = await testWorld()
    expect((await call(w, 'POST', '/api/roles', { body: { name: 'n'.repeat(64), description: 'd'.repeat(255) } })).status).toBe(201)
  })
  test('PATCH accepts only description', async () => {
    const w = await testWorld()
    const id = w.roleId('viewer')
    const r = await call(w, 'PATCH', `/api/roles/${id}`, { body: { name: 'x' } })
    expect(r.body.detail).toEqual([{ type: 'extra_forbidden', loc: ['body', 'name'], msg: 'Extra inputs are not permitted', input: 'x' }])
  })
  test('built-in roles: description may change; grants and the role itself are protected', async () => {
    const w = await testWorld()
    const id = w.roleId('viewer')
    expect((await call(w, 'PATCH', `/api/roles/${id}`, { body: { description: 'read only' } })).body).toMatchObject({ name: 'viewer', is_builtin: true, description: 'read only' })
    expect(await call(w, 'DELETE', `/api/roles/${id}`)).toMatchObject({ status: 409, body: { detail: 'Cannot delete a built-in role' } })
    expect(await call(w, 'POST', `/api/roles/${id}/permissions`, { body: { verb: 'view', resource_glob: 'audit:*' } })).toMatchObject({ status: 409, body: { detail: "Cannot change a built-in role's permissions" } })
  })
  test('list is sorted by name', async () => {
    const w = await testWorld()
    await call(w, 'POST', '/api/roles', { body: { name: 'Beta' } })
    await call(w, 'POST', '/api/roles', { body: { name: 'alpha' } })
    const r = (await call(w, 'GET', '/api/roles')).body
    expect(r.total).toBe(5)
    expect(r.roles.map((x: any) => x.name)).toEqual(['admin', 'alpha', 'Beta', 'operator', 'viewer'])
  })
})

describe('users', () => {
  test('create → read → patch → set password → delete, never exposing the hash', async () => {
    const w = await testWorld()
    const c = await call(w, 'POST', '/api/users', { body: { username: 'alice', password: 'alice-pass-1', display_name: 'Alice', roles: [w.roleId('viewer')] } })
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({ username: 'alice', display_name: 'Alice', must_change_pw: true, is_active: true, is_builtin: false, roles: [{ id: w.roleId('viewer'), name: 'viewer' }] })
    expect(JSON.stringify(c.body)).not.toContain('argon2')
    expect(await call(w, 'POST', '/api/users', { body: { username: 'ALICE', password: 'another-pass' } })).toMatchObject({ status: 409, body: { detail: 'Username already exists' } })
    const id = c.body.id
    const p = await call(w, 'PATCH', `/api/users/${id}`, { body: { display_name: 'Alice A.', roles: [w.roleId('operator')] } })
    expect(p.body).toMatchObject({ display_name: 'Alice A.', roles: [{ name: 'operator' }] })
    expect((await call(w, 'POST', `/api/users/${id}/password`, { body: { new_password: 'reset-pass-1', must_change_pw: false } })).status).toBe(204)
    const login = await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username: 'alice', password: 'reset-pass-1' } })
    expect(login.body.must_change_pw).toBe(false)
    const list = (await call(w, 'GET', '/api/users')).body
    expect(list.total).toBe(5)
    expect(JSON.stringify(list)).not.toContain('password_hash')
    expect((await call(w, 'DELETE', `/api/users/${id}`)).status).toBe(204)
    expect(await call(w, 'GET', `/api/users/${id}`)).toMatchObject({ status: 404, body: { detail: 'User not found' } })
  })
  test('deleting yourself or a built-in user is 409', async () => {
    const w = await testWorld()
    const users = (await call(w, 'GET', '/api/users')).body.users
    const admin = users.find((u: any) => u.username === 'admin')
    expect((await call(w, 'DELETE', `/api/users/${admin.id}`)).status).toBe(409)
    const r = await call(w, 'POST', '/api/users', { body: { username: 'boss', password: 'boss-pass-1', roles: [w.roleId('admin')], must_change_pw: false } })
    const tok = (await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username: 'boss', password: 'boss-pass-1' } })).headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
    expect(await call(w, 'DELETE', `/api/users/${admin.id}`, { who: { token: tok } })).toMatchObject({ status: 409, body: { detail: 'Cannot delete a built-in user' } })
    expect(await call(w, 'DELETE', `/api/users/${r.body.id}`, { who: { token: tok } })).toMatchObject({ status: 409, body: { detail: 'Cannot delete yourself' } })
  })
  test('an unknown role id is 422 and changes nothing', async () => {
    const w = await testWorld()
    const id = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'view').id
    const r = await call(w, 'PUT', `/api/users/${id}/roles`, { body: { role_ids: [w.roleId('admin'), '00000000-0000-4000-8000-000000000000'] } })
    expect(r.status).toBe(422)
    expect(r.body.detail[0]).toMatchObject({ loc: ['body', 'role_ids', 1], input: '00000000-0000-4000-8000-000000000000' })
    expect((await call(w, 'GET', `/api/users/${id}/roles`)).body.roles.map((x: any) => x.name)).toEqual(['viewer'])
  })
  test.each([
    [{ username: 'bad name', password: 'long-enough' }, 'string_pattern_mismatch'],
    [{ username: 'x'.repeat(65), password: 'long-enough' }, 'string_too_long'],
    [{ username: 'ok', password: 'short' }, 'string_too_short'],
    [{ username: 'ok', password: 'long-enough', roles: ['nope'] }, 'value_error'],
    [{ username: 'ok', password: 'long-enough', roles: [''] }, 'string_too_short'],
  ])('POST /api/users %p → %s', async (body, type) => {
    const w = await testWorld()
    const r = await call(w, 'POST', '/api/users', { body })
    expect(r.status).toBe(422)
    expect(r.body.detail[0].type).toBe(type)
  })
  test('roles are given by id or by name, any case, as the CLI takes them (issue 23 item 5); an unknown name is 422 and creates nothing', async () => {
    const w = await testWorld()
    const made = await call(w, 'POST', '/api/users', { body: { username: 'byname', password: 'long-enough', roles: ['Operator', w.roleId('viewer'), 'viewer'] } })
    expect(made.status).toBe(201)
    expect(made.body.roles.map((r: any) => r.name).sort()).toEqual(['operator', 'viewer'])
    expect((await call(w, 'PATCH', `/api/users/${made.body.id}`, { body: { roles: ['VIEWER'] } })).body.roles.map((r: any) => r.name)).toEqual(['viewer'])
    expect((await call(w, 'PUT', `/api/users/${made.body.id}/roles`, { body: { role_ids: ['operator'] } })).body.roles.map((r: any) => r.name)).toEqual(['operator'])
    const bad = await call(w, 'POST', '/api/users', { body: { username: 'nobody2', password: 'long-enough', roles: ['viewer', 'wizard'] } })
    expect(bad).toMatchObject({ status: 422, body: { detail: [{ type: 'value_error', loc: ['body', 'roles', 1], msg: 'Value error, unknown role', input: 'wizard' }] } })
    expect((await call(w, 'GET', '/api/users')).body.users.map((u: any) => u.username)).not.toContain('nobody2')
  })
  test('accepted usernames use A-Z a-z 0-9 . _ @ -', async () => {
    const w = await testWorld()
    expect((await call(w, 'POST', '/api/users', { body: { username: 'J.Doe_1@corp-x', password: 'long-enough' } })).status).toBe(201)
  })
})

describe('control characters (contract §4: none in any name field, one definition: C0, DEL and C1)', () => {
  test.each(['a\u0001b', 'a\u007fb', 'a\u0085b', 'a\u009fb'])('%j is refused in role names, descriptions, token names and display names', async (bad) => {
    const w = await testWorld()
    const pattern = '^[^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*$'
    const expectRefused = (r: { status: number; body: any }, field: string) =>
      expect(r).toMatchObject({ status: 422, body: { detail: [{ type: 'string_pattern_mismatch', loc: ['body', field], input: bad, ctx: { pattern } }] } })
    expectRefused(await call(w, 'POST', '/api/roles', { body: { name: bad } }), 'name')
    expectRefused(await call(w, 'POST', '/api/roles', { body: { name: 'ok', description: bad } }), 'description')
    expectRefused(await call(w, 'POST', '/api/auth/tokens', { body: { name: bad } }), 'name')
    expectRefused(await call(w, 'POST', '/api/users', { body: { username: 'cc-user', password: 'long-enough-1', display_name: bad } }), 'display_name')
    expect((await call(w, 'POST', `/api/roles/${(await call(w, 'POST', '/api/roles', { body: { name: 'globs' } })).body.id}/permissions`, { body: { verb: 'view', resource_glob: bad } })).status).toBe(422)
  })
  test('other non-ASCII letters stay allowed', async () => {
    const w = await testWorld()
    expect((await call(w, 'POST', '/api/roles', { body: { name: 'Équipe ñ 東京', description: 'café' } })).status).toBe(201)
  })
})

describe('password reset', () => {
  test("an admin's reset (also saltdeck user reset-password) ends every credential of the user: browser sessions and API tokens", async () => {
    const w = await testWorld()
    const u = (await call(w, 'POST', '/api/users', { body: { username: 'resettable', password: 'first-pass-1', roles: [w.roleId('viewer')], must_change_pw: false } })).body
    const cookie = (await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username: 'resettable', password: 'first-pass-1' } })).headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
    const token: string = (await call(w, 'POST', '/api/auth/tokens', { who: { cookie }, headers: { 'content-type': 'application/json' }, body: { name: 'ci' } })).body.token
    expect((await call(w, 'GET', '/api/auth/me', { who: { token } })).status).toBe(200)
    expect((await call(w, 'POST', `/api/users/${u.id}/password`, { body: { new_password: 'second-pass-2', must_change_pw: false } })).status).toBe(204)
    expect((await call(w, 'GET', '/api/auth/me', { who: { token } })).status).toBe(401)
    expect((await call(w, 'GET', '/api/auth/me', { who: { cookie } })).status).toBe(401)
  })
})

describe('the last full administrator (*:*) stays', () => {
  /** Logs a user in and returns the session token (used as a Bearer token). */
  const sessionOf = async (w: Awaited<ReturnType<typeof testWorld>>, username: string, password: string): Promise<string> =>
    (await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username, password } })).headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
  const LAST = 'At least one active user must keep full administrative access (*:*)'
  test("the only admin cannot drop its admin role; nothing changes and admin routes still answer", async () => {
    const w = await testWorld()
    const admin = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'admin')
    expect(await call(w, 'PUT', `/api/users/${admin.id}/roles`, { body: { role_ids: [] } })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect(await call(w, 'PATCH', `/api/users/${admin.id}`, { body: { roles: [w.roleId('viewer')] } })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect((await call(w, 'GET', `/api/users/${admin.id}/roles`)).body.roles.map((r: any) => r.name)).toEqual(['admin'])
    expect((await call(w, 'GET', '/api/admin/settings')).status).toBe(200)
  })
  test('a user manager (no *:*) cannot deactivate, strip or delete the last full admin; with a second admin the first may go', async () => {
    const w = await testWorld()
    const admin = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'admin')
    const mgrRole = (await call(w, 'POST', '/api/roles', { body: { name: 'user-managers' } })).body
    for (const verb of ['manage_user', 'view']) await call(w, 'POST', `/api/roles/${mgrRole.id}/permissions`, { body: { verb, resource_glob: 'user:*' } })
    const other = (await call(w, 'POST', '/api/users', { body: { username: 'other-admin', password: 'other-admin-1', roles: [w.roleId('admin')], must_change_pw: false } })).body
    await call(w, 'POST', '/api/users', { body: { username: 'mgr', password: 'manager-pass-1', roles: [mgrRole.id], must_change_pw: false } })
    const mgr = { token: await sessionOf(w, 'mgr', 'manager-pass-1') }
    // Two full admins: one may go.
    expect((await call(w, 'PATCH', `/api/users/${other.id}`, { who: mgr, body: { is_active: false } })).status).toBe(200)
    // Now admin is the last one.
    expect(await call(w, 'PATCH', `/api/users/${admin.id}`, { who: mgr, body: { roles: [mgrRole.id] } })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect(await call(w, 'PUT', `/api/users/${admin.id}/roles`, { who: mgr, body: { role_ids: [] } })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect((await call(w, 'PATCH', `/api/users/${other.id}`, { who: mgr, body: { is_active: true } })).status).toBe(200)
    expect((await call(w, 'DELETE', `/api/users/${other.id}`, { who: mgr })).status).toBe(204)
    expect((await call(w, 'GET', `/api/users/${admin.id}/roles`)).body.roles.map((r: any) => r.name)).toEqual(['admin'])
  })
  test('a custom role granting *:* to the last admin cannot lose that grant or be deleted', async () => {
    const w = await testWorld()
    const role = (await call(w, 'POST', '/api/roles', { body: { name: 'root-ish' } })).body
    const perm = (await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: '*', resource_glob: '*' } })).body
    const boss = (await call(w, 'POST', '/api/users', { body: { username: 'boss', password: 'boss-pass-12', roles: [role.id], must_change_pw: false } })).body
    const admin = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'admin')
    const asBoss = { token: await sessionOf(w, 'boss', 'boss-pass-12') }
    expect((await call(w, 'PUT', `/api/users/${admin.id}/roles`, { body: { role_ids: [] } })).status).toBe(200)
    expect(await call(w, 'DELETE', `/api/roles/${role.id}/permissions/${perm.id}`, { who: asBoss })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect(await call(w, 'DELETE', `/api/roles/${role.id}`, { who: asBoss })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect(await call(w, 'PATCH', `/api/users/${boss.id}`, { who: asBoss, body: { roles: [] } })).toMatchObject({ status: 409, body: { detail: LAST } })
    expect((await call(w, 'GET', `/api/users/${boss.id}/roles`, { who: asBoss })).body.roles.map((r: any) => r.name)).toEqual(['root-ish'])
  })
})
