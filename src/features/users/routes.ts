/** The users API (contract §3). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, DisplayName, NewPassword, Nullable, RoleRefs, Username, UuidPath } from '../../http/schemas'
import { UserListOut, UserOut, UserRolesOut } from './schema'
import { createUser, deleteUser, getUser, listUsers, rolesOf, setPassword, setRoles, updateUser, userOut } from './service'

const view = { verb: 'view', resource: 'user:*' }
const manage = { verb: 'manage_user', resource: 'user:*' }
const ById = UuidPath('user_id')

export const userRoutes = [
  route({ method: 'GET', path: '/api/users', tag: 'users', summary: 'List users', access: view, response: UserListOut, handler: ({ deps }) => listUsers(deps) }),
  route({
    method: 'POST', path: '/api/users', errors: [409], tag: 'users', summary: 'Create a user', access: manage, status: 201, response: UserOut,
    body: T.Object({
      username: Username, password: NewPassword, display_name: T.Optional(DisplayName), must_change_pw: T.Optional(T.Boolean()),
      is_active: T.Optional(T.Boolean()), roles: T.Optional(RoleRefs),
    }, { additionalProperties: false }),
    handler: ({ deps, body }) => createUser(deps, body),
    audit: { action: 'user.create', target: (_, out) => out.username },
  }),
  route({ method: 'GET', path: '/api/users/:user_id', errors: [404], tag: 'users', summary: 'Read a user', access: view, params: ById, response: UserOut, handler: async ({ deps, params }) => userOut(deps, await getUser(deps, params.user_id)) }),
  route({
    method: 'PATCH', path: '/api/users/:user_id', errors: [404, 409], tag: 'users', summary: 'Change a user', access: manage, params: ById, response: UserOut,
    body: T.Object({ display_name: T.Optional(Nullable(DisplayName)), is_active: T.Optional(Nullable(T.Boolean())), roles: T.Optional(Nullable(RoleRefs)) }, { additionalProperties: false }),
    handler: ({ deps, params, body, principal }) => updateUser(deps, params.user_id, body, principal.userId),
    audit: { action: 'user.update', target: (_, out) => out.username },
  }),
  route({
    method: 'DELETE', path: '/api/users/:user_id', errors: [404, 409], tag: 'users', summary: 'Delete a user', access: manage, params: ById, status: 204,
    handler: ({ deps, params, principal }) => deleteUser(deps, params.user_id, principal.userId),
    audit: { action: 'user.delete', target: (_, u) => u.username },
  }),
  route({
    method: 'POST', path: '/api/users/:user_id/password', errors: [404, 409], tag: 'users', summary: "Set a user's password", access: manage, params: ById, status: 204,
    body: T.Object({ new_password: NewPassword, must_change_pw: Default(Nullable(T.Boolean()), true) }, { additionalProperties: false }),
    // An explicit null asks for the default too.
    handler: ({ deps, params, body }) => setPassword(deps, params.user_id, body.new_password, body.must_change_pw ?? true),
    audit: { action: 'user.set_password', target: async ({ deps, params }) => (await getUser(deps, params.user_id)).username },
  }),
  route({
    method: 'GET', path: '/api/users/:user_id/roles', errors: [404], tag: 'users', summary: "A user's roles", access: view, params: ById, response: UserRolesOut,
    async handler({ deps, params }) {
      await getUser(deps, params.user_id)
      const r = await rolesOf(deps, params.user_id)
      return { total: r.length, roles: r }
    },
  }),
  route({
    method: 'PUT', path: '/api/users/:user_id/roles', errors: [404, 409], tag: 'users', summary: "Replace a user's roles", access: manage, params: ById, response: UserRolesOut,
    body: T.Object({ role_ids: RoleRefs }, { additionalProperties: false }),
    async handler({ deps, params, body }) {
      await setRoles(deps, params.user_id, body.role_ids)
      const r = await rolesOf(deps, params.user_id)
      return { total: r.length, roles: r }
    },
    audit: { action: 'user.set_roles', target: async ({ deps, params }) => (await getUser(deps, params.user_id)).username },
  }),
]
