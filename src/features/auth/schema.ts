/** The answer schemas of login, me and the sign-in choices (contract §3, §14): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'
import { Nullable } from '../../lib/schemas'

/** One grant as the caller holds it. */
const Permission = T.Object({ verb: T.String(), resource_glob: T.String() })
/** The body of login and me. */
export const UserSummary = T.Object({ username: T.String(), display_name: T.String(), must_change_pw: T.Boolean(), permissions: T.Array(Permission) })
/** GET /api/auth/providers: the sign-in choices the login page offers besides the password. */
export const ProvidersOut = T.Object({ oidc: Nullable(T.Object({ display_name: T.String(), start: T.String({ description: 'The path that starts the sign-in' }) })) })
/** POST /api/auth/tokens: the new token, its secret shown this once. */
export const TokenCreatedOut = T.Object({ id: T.String({ format: 'uuid' }), name: T.String(), token: T.String(), expires_at: Nullable(T.String({ format: 'date-time' })) })
/** One live API token as listed (never its secret). */
export const TokenOut = T.Object({ id: T.String({ format: 'uuid' }), name: T.String(), created_at: T.String({ format: 'date-time' }), expires_at: Nullable(T.String({ format: 'date-time' })) })
/** GET /api/auth/tokens. */
export const TokenListOut = T.Object({ total: T.Integer(), tokens: T.Array(TokenOut) })
