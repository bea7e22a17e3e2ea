/** The roles API (interface.md and contract §4). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { BIDI_CONTROLS, CONTROL_CHARS, Default, Nullable, PlainText, UuidPath } from '../../http/schemas'
import { addPermission, createRole, deleteRole, getRole, listRoles, removePermission, roleDetail, updateRole } from './service'

const view = { verb: 'view', resource: 'role:*' }
const manage = { verb: 'manage_role', resource: 'role:*' }
/** The Role resource of interface.md. */
export const RoleOut = T.Object({ id: T.String({ format: 'uuid' }), name: T.String(), is_builtin: T.Boolean(), description: T.String() })
const Description = PlainText(0, 255)
const GlobPart = T.String({ minLength: 1, maxLength: 128, pattern: `^[^\\s${CONTROL_CHARS}${BIDI_CONTROLS}]+$` })

export const roleRoutes = [
  route({ method: 'GET', path: '/api/roles', tag: 'roles', summary: 'List roles', access: view, handler: ({ deps }) => listRoles(deps) }),
  route({
    method: 'POST', path: '/api/roles', errors: [409], tag: 'roles', summary: 'Create a role', access: manage, status: 201, response: RoleOut,
    body: T.Object({ name: PlainText(1, 64, true), description: Default(Description, '') }, { additionalProperties: false }),
    handler: ({ deps, body }) => createRole(deps, body.name, body.description),
    audit: { action: 'role.create', target: (_, out) => out.name },
  }),
  route({ method: 'GET', path: '/api/roles/:role_id', errors: [404], tag: 'roles', summary: 'Read a role with its permissions', access: view, params: UuidPath('role_id'), handler: ({ deps, params }) => roleDetail(deps, params.role_id) }),
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
    method: 'POST', path: '/api/roles/:role_id/permissions', errors: [404, 409], tag: 'roles', summary: 'Grant a permission to a custom role', access: manage, params: UuidPath('role_id'), status: 201,
    body: T.Object({ verb: GlobPart, resource_glob: GlobPart }, { additionalProperties: false }),
    handler: ({ deps, params, body }) => addPermission(deps, params.role_id, body.verb, body.resource_glob),
    audit: { action: 'role.grant', target: ({ deps, params, body }) => `${getRole(deps, params.role_id).name}: ${body.verb} ${body.resource_glob}` },
  }),
  route({
    method: 'DELETE', path: '/api/roles/:role_id/permissions/:permission_id', errors: [404, 409], tag: 'roles', summary: 'Remove a permission from a custom role', access: manage,
    params: UuidPath('role_id', 'permission_id'), status: 204,
    handler: ({ deps, params }) => removePermission(deps, params.role_id, params.permission_id),
    audit: { action: 'role.revoke', target: ({ deps, params }) => `${getRole(deps, params.role_id).name}: ${params.permission_id}` },
  }),
]
