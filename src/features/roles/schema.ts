/** The answer schemas of the roles API (contract §4): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'

/** The Role resource of interface.md. */
export const RoleOut = T.Object({ id: T.String({ format: 'uuid' }), name: T.String(), is_builtin: T.Boolean(), description: T.String() })
/** One grant of a role: target_glob is the minions an execute grant is scoped to (`*` for any other grant). */
export const GrantOut = T.Object({ id: T.String({ format: 'uuid' }), verb: T.String(), resource_glob: T.String(), target_glob: T.String() })
/** A role with its grants. */
export const RoleDetailOut = T.Object({ ...RoleOut.properties, permissions: T.Array(GrantOut) })
/** GET /api/roles. */
export const RoleListOut = T.Object({ total: T.Integer(), roles: T.Array(RoleOut) })
