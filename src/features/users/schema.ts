/** The answer schemas of the users API (contract §3): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'
import { OneOf } from '../../lib/schemas'
import { PROVIDERS } from '../identity/schema'

/** A role as a user names it. */
export const UserRoleOut = T.Object({ id: T.String(), name: T.String() })
/** A user as answered (never a password hash); `source` says who checks its password. */
export const UserOut = T.Object({
  id: T.String({ format: 'uuid' }), username: T.String(), display_name: T.String(), must_change_pw: T.Boolean(), is_active: T.Boolean(), is_builtin: T.Boolean(),
  source: OneOf(['local', ...PROVIDERS] as const), roles: T.Array(UserRoleOut),
  created_at: T.String({ format: 'date-time' }), updated_at: T.String({ format: 'date-time' }),
})
/** GET /api/users. */
export const UserListOut = T.Object({ total: T.Integer(), users: T.Array(UserOut) })
/** GET and PUT /api/users/{id}/roles: the user's roles, sorted by name. */
export const UserRolesOut = T.Object({ total: T.Integer(), roles: T.Array(UserRoleOut) })
