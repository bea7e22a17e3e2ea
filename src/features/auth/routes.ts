/** Login, logout, me, change-password and API tokens (contract §3). */
import { Type as T } from '@sinclair/typebox'
import { eq } from 'drizzle-orm'
import { route } from '../../http/route'
import { NewPassword, Nullable, PlainText, UuidPath } from '../../http/schemas'
import { AppError, ValidationFailed, httpError } from '../../http/errors'
import { users } from '../../db/schema'
import { audit } from '../audit/service'
import {
  checkLogin, createApiToken, createSession, deleteSession, endSessions, hashPassword, listApiTokens, revokeApiToken, userSummary, verifyPassword,
} from './service'

const Permission = T.Object({ verb: T.String(), resource_glob: T.String() })
/** The body of login and me. */
export const UserSummary = T.Object({ username: T.String(), display_name: T.String(), must_change_pw: T.Boolean(), permissions: T.Array(Permission) })

export const authRoutes = [
  route({
    method: 'POST', path: '/api/auth/login', tag: 'auth', summary: 'Log in with a username and password', access: 'public',
    body: T.Object({ username: T.String({ minLength: 1, maxLength: 1024 }), password: T.String({ minLength: 1, maxLength: 1024, writeOnly: true }) }),
    response: UserSummary,
    async handler({ body, deps, client, cookie }) {
      try {
        const userId = await checkLogin(deps, body.username, body.password, client)
        const { token, maxAge } = createSession(deps, userId)
        cookie.set(token, maxAge)
        const summary = userSummary(deps, userId)
        audit(deps, { username: summary.username, action: 'auth.login', target: summary.username, client })
        return summary
      } catch (e) {
        const known = httpError(e)
        if (known) audit(deps, { username: body.username.slice(0, 64), action: 'auth.login', target: body.username.slice(0, 64), ok: false, detail: known.detail, client })
        throw e
      }
    },
  }),
  route({
    method: 'POST', path: '/api/auth/logout', tag: 'auth', summary: 'End the current session', access: 'optional', status: 204,
    handler({ deps, principal, cookie }) {
      if (principal) {
        deleteSession(deps, principal.sessionId)
        audit(deps, { username: principal.username, action: 'auth.logout', target: principal.username })
      }
      cookie.clear()
    },
  }),
  route({
    method: 'GET', path: '/api/auth/me', tag: 'auth', summary: 'The logged-in user', access: 'login', allowWhilePasswordChange: true, response: UserSummary,
    handler: ({ deps, principal }) => userSummary(deps, principal!.userId),
  }),
  route({
    method: 'POST', path: '/api/auth/change-password', tag: 'auth', summary: 'Change your own password', access: 'login', allowWhilePasswordChange: true, status: 204,
    body: T.Object({ current_password: T.String({ minLength: 1, maxLength: 1024, writeOnly: true }), new_password: NewPassword }, { additionalProperties: false }),
    async handler({ deps, principal, body, client }) {
      const p = principal!
      const u = deps.db.select().from(users).where(eq(users.id, p.userId)).get()!
      if (body.new_password.toLowerCase() === u.username.toLowerCase())
        throw new ValidationFailed([{ type: 'value_error', loc: ['body', 'new_password'], msg: 'Value error, the new password must not equal the username', ctx: { error: 'the new password must not equal the username' } }])
      if (!(await verifyPassword(deps, body.current_password, u.passwordHash))) {
        audit(deps, { username: p.username, action: 'auth.change_password', target: p.username, ok: false, detail: 'wrong current password', client })
        throw new AppError(403, 'Current password is incorrect')
      }
      const hash = await hashPassword(deps, body.new_password)
      deps.db.update(users).set({ passwordHash: hash, mustChangePw: false, updatedAt: deps.clock.now() }).where(eq(users.id, p.userId)).run()
      endSessions(deps, p.userId, p.sessionId)
      audit(deps, { username: p.username, action: 'auth.change_password', target: p.username, client })
    },
  }),
  route({
    method: 'POST', path: '/api/auth/tokens', tag: 'auth', summary: 'Create an API token (shown once)', access: 'login', status: 201,
    body: T.Object({ name: PlainText(1, 128, true), expires_in_days: T.Optional(Nullable(T.Integer({ minimum: 1, maximum: 3650 }))) }, { additionalProperties: false }),
    handler({ deps, principal, body, client }) {
      const out = createApiToken(deps, principal!.userId, body.name, body.expires_in_days)
      audit(deps, { username: principal!.username, action: 'token.create', target: body.name, client })
      return out
    },
  }),
  route({
    method: 'GET', path: '/api/auth/tokens', tag: 'auth', summary: 'List your API tokens', access: 'login',
    handler: ({ deps, principal }) => listApiTokens(deps, principal!.userId),
  }),
  route({
    method: 'DELETE', path: '/api/auth/tokens/:token_id', tag: 'auth', summary: 'Revoke one of your API tokens', access: 'login', status: 204,
    params: UuidPath('token_id'),
    handler({ deps, principal, params, client }) {
      revokeApiToken(deps, principal!.userId, params.token_id)
      audit(deps, { username: principal!.username, action: 'token.revoke', target: params.token_id, client })
    },
  }),
]
