/** The users API (contract §3). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { NewPassword, Nullable, PlainText, RoleIds, Username, UuidPath } from '../../http/schemas'
import { audit } from '../audit/service'
import { createUser, deleteUser, getUser, listUsers, rolesOf, setPassword, setRoles, updateUser, userOut } from './service'

const view = { verb: 'view', resource: 'user:*' }
const manage = { verb: 'manage_user', resource: 'user:*' }
const ById = UuidPath('user_id')

export const userRoutes = [
  route({ method: 'GET', path: '/api/users', tag: 'users', summary: 'List users', access: view, handler: ({ deps }) => listUsers(deps) }),
  route({
    method: 'POST', path: '/api/users', tag: 'users', summary: 'Create a user', access: manage, status: 201,
    body: T.Object({
      username: Username, password: NewPassword, display_name: T.Optional(PlainText(0, 128)), must_change_pw: T.Optional(T.Boolean()),
      is_active: T.Optional(T.Boolean()), roles: T.Optional(RoleIds),
    }, { additionalProperties: false }),
    async handler({ deps, body, principal, client }) {
      const out = await createUser(deps, body)
      audit(deps, { username: principal!.username, action: 'user.create', target: out.username, client })
      return out
    },
  }),
  route({ method: 'GET', path: '/api/users/:user_id', tag: 'users', summary: 'Read a user', access: view, params: ById, handler: ({ deps, params }) => userOut(deps, getUser(deps, params.user_id)) }),
  route({
    method: 'PATCH', path: '/api/users/:user_id', tag: 'users', summary: 'Change a user', access: manage, params: ById,
    body: T.Object({ display_name: T.Optional(Nullable(PlainText(0, 128))), is_active: T.Optional(Nullable(T.Boolean())), roles: T.Optional(Nullable(RoleIds)) }, { additionalProperties: false }),
    handler({ deps, params, body, principal, client }) {
      const out = updateUser(deps, params.user_id, body, principal!.userId)
      audit(deps, { username: principal!.username, action: 'user.update', target: out.username, client })
      return out
    },
  }),
  route({
    method: 'DELETE', path: '/api/users/:user_id', tag: 'users', summary: 'Delete a user', access: manage, params: ById, status: 204,
    handler({ deps, params, principal, client }) {
      const u = deleteUser(deps, params.user_id, principal!.userId)
      audit(deps, { username: principal!.username, action: 'user.delete', target: u.username, client })
    },
  }),
  route({
    method: 'POST', path: '/api/users/:user_id/password', tag: 'users', summary: "Set a user's password", access: manage, params: ById, status: 204,
    body: T.Object({ new_password: NewPassword, must_change_pw: T.Optional(Nullable(T.Boolean())) }, { additionalProperties: false }),
    async handler({ deps, params, body, principal, client }) {
      await setPassword(deps, params.user_id, body.new_password, body.must_change_pw ?? true)
      audit(deps, { username: principal!.username, action: 'user.set_password', target: getUser(deps, params.user_id).username, client })
    },
  }),
  route({
    method: 'GET', path: '/api/users/:user_id/roles', tag: 'users', summary: "A user's roles", access: view, params: ById,
    handler({ deps, params }) {
      getUser(deps, params.user_id)
      const r = rolesOf(deps, params.user_id)
      return { total: r.length, roles: r }
    },
  }),
  route({
    method: 'PUT', path: '/api/users/:user_id/roles', tag: 'users', summary: "Replace a user's roles", access: manage, params: ById,
    body: T.Object({ role_ids: RoleIds }, { additionalProperties: false }),
    handler({ deps, params, body, principal, client }) {
      setRoles(deps, params.user_id, body.role_ids)
      audit(deps, { username: principal!.username, action: 'user.set_roles', target: getUser(deps, params.user_id).username, client })
      const r = rolesOf(deps, params.user_id)
      return { total: r.length, roles: r }
    },
  }),
]
