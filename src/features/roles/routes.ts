/** The roles API (interface.md and contract §4). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { BIDI_CONTROLS, CONTROL_CHARS, Default, Nullable, PlainText, UuidPath } from '../../http/schemas'
import { valueError } from '../../http/errors'
import { mayApply } from './scope'
import { GrantOut, RoleDetailOut, RoleListOut, RoleOut } from './schema'
import { addPermission, createRole, deleteRole, getRole, listRoles, removePermission, roleDetail, updateRole } from './service'

const view = { verb: 'view', resource: 'role:*' }
const manage = { verb: 'manage_role', resource: 'role:*' }
const Description = PlainText(0, 255)
const GlobPart = T.String({ minLength: 1, maxLength: 128, pattern: `^[^\\s${CONTROL_CHARS}${BIDI_CONTROLS}]+$` })
/** Salt's glob on minion ids (fnmatch: `*`, `?`, `[…]`); a minion id is at most 255 characters. */
const TargetGlob = T.String({ minLength: 1, maxLength: 255, pattern: `^[^\\s${CONTROL_CHARS}${BIDI_CONTROLS}]+$` })

export const roleRoutes = [
  route({ method: 'GET', path: '/api/roles', tag: 'roles', summary: 'List roles', access: view, response: RoleListOut, handler: ({ deps }) => listRoles(deps) }),
  route({
    method: 'POST', path: '/api/roles', errors: [409], tag: 'roles', summary: 'Create a role', access: manage, status: 201, response: RoleOut,
    body: T.Object({ name: PlainText(1, 64, true), description: Default(Description, '') }, { additionalProperties: false }),
    handler: ({ deps, body }) => createRole(deps, body.name, body.description),
    audit: { action: 'role.create', target: (_, out) => out.name },
  }),
  route({ method: 'GET', path: '/api/roles/:role_id', errors: [404], tag: 'roles', summary: 'Read a role with its permissions', access: view, response: RoleDetailOut, params: UuidPath('role_id'), handler: ({ deps, params }) => roleDetail(deps, params.role_id) }),
  route({
    method: 'PATCH', path: '/api/roles/:role_id', errors: [404], tag: 'roles', summary: "Change a role's description", access: manage, params: UuidPath('role_id'), response: RoleOut,
    body: T.Object({ description: T.Optional(Nullable(Description)) }, { additionalProperties: false }),
    handler: ({ deps, params, body }) => updateRole(deps, params.role_id, body.description),
    audit: { action: 'role.update', target: (_, out) => out.name },
  }),
  route({
    method: 'DELETE', path: '/api/roles/:role_id', errors: [404, 409], tag: 'roles', summary: 'Delete a custom role', access: manage, params: UuidPath('role_id'), status: 204,
    handler: ({ deps, params }) => deleteRole(deps, params.role_id),
    audit: { action: 'role.delete', target: (_, r) => r.name },
  }),
  route({
    method: 'POST', path: '/api/roles/:role_id/permissions', errors: [404, 409], tag: 'roles', summary: 'Grant a permission to a custom role', access: manage, params: UuidPath('role_id'), status: 201, response: GrantOut,
    body: T.Object({ verb: GlobPart, resource_glob: GlobPart, target_glob: Default(TargetGlob, '*') }, { additionalProperties: false }),
    handler: async ({ deps, params, body }) => {
      // Only running salt functions is scoped to minions (contract §14); a target on any other grant would be kept and mean nothing.
      if (body.target_glob !== '*' && !mayApply(body, 'execute', 'salt')) throw valueError('target_glob scopes only grants of execute on salt:<function>', body)
      return addPermission(deps, params.role_id, body.verb, body.resource_glob, body.target_glob)
    },
    audit: { action: 'role.grant', target: async ({ deps, params, body }) => `${(await getRole(deps, params.role_id)).name}: ${body.verb} ${body.resource_glob}${body.target_glob === '*' ? '' : ` on ${body.target_glob}`}` },
  }),
  route({
    method: 'DELETE', path: '/api/roles/:role_id/permissions/:permission_id', errors: [404, 409], tag: 'roles', summary: 'Remove a permission from a custom role', access: manage,
    params: UuidPath('role_id', 'permission_id'), status: 204,
    handler: ({ deps, params }) => removePermission(deps, params.role_id, params.permission_id),
    audit: { action: 'role.revoke', target: async ({ deps, params }) => `${(await getRole(deps, params.role_id)).name}: ${params.permission_id}` },
  }),
]
