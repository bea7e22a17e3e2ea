/** A user holding a new role with the given grants, for the tests of scoped permissions (contract §14). */
import { expect } from 'bun:test'
import { call, type testWorld } from './app'
import { createUser } from '../../src/features/users/service'
import { createSession } from '../../src/features/auth/service'

/** A user `<name>-user` holding a new role `name` with these grants ([verb, resource_glob, target_glob?]); answers its token, role id and username. */
export async function userWith(w: Awaited<ReturnType<typeof testWorld>>, name: string, grants: [string, string, string?][]) {
  const role = (await call(w, 'POST', '/api/roles', { body: { name } })).body
  for (const [verb, resource_glob, target_glob] of grants)
    expect((await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb, resource_glob, ...(target_glob ? { target_glob } : {}) } })).status).toBe(201)
  const u = await createUser(w.deps, { username: `${name}-user`, password: 'password-123', must_change_pw: false, roles: [role.id] })
  return { token: (await createSession(w.deps, u.id)).token, roleId: role.id as string, username: `${name}-user` }
}
