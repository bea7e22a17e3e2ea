/** Login, logout, me, change-password and API tokens (contract §3). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { NewPassword, Nullable, PlainText, UuidPath } from '../../http/schemas'
import { ValidationFailed, valueErrorEntry } from '../../http/errors'
import { changeOwnPassword } from '../users/service'
import { passwordSignIn } from '../identity/login'
import { createApiToken, deleteSession, listApiTokens, principalSummary, revokeApiToken, userSummary } from './service'
import { TokenCreatedOut, TokenListOut, UserSummary } from './schema'


export const authRoutes = [
  route({
    method: 'POST', path: '/api/auth/login', errors: [401, 403, 429], tag: 'auth', summary: 'Log in with a username and password (a local user, else LDAP when enabled)', access: 'public',
    body: T.Object({ username: T.String({ minLength: 1, maxLength: 1024 }), password: T.String({ minLength: 1, maxLength: 1024, writeOnly: true }) }),
    response: UserSummary,
    async handler({ body, deps, client, cookie }) {
      // The sign-in writes its own audit entry (auth.login, with the source and outcome), failures too.
      const { userId, token, maxAge } = await passwordSignIn(deps, body.username, body.password, client)
      cookie.set(token, maxAge)
      return userSummary(deps, userId)
    },
  }),
  route({
    method: 'POST', path: '/api/auth/logout', tag: 'auth', summary: 'End the current session', access: 'optional', status: 204,
    async handler({ deps, principal, cookie }) {
      if (principal) await deleteSession(deps, principal.sessionId)
      cookie.clear()
    },
    audit: { action: 'auth.logout', skip: (c) => !c.principal, target: (c) => c.principal?.username ?? null },
  }),
  route({
    method: 'GET', path: '/api/auth/me', tag: 'auth', summary: 'The logged-in user', access: 'login', allowWhilePasswordChange: true, response: UserSummary,
    handler: ({ principal }) => principalSummary(principal),
  }),
  route({
    method: 'POST', path: '/api/auth/change-password', errors: [403, 409], tag: 'auth', summary: 'Change your own password', access: 'login', allowWhilePasswordChange: true, status: 204,
    body: T.Object({ current_password: T.String({ minLength: 1, maxLength: 1024, writeOnly: true }), new_password: NewPassword }, { additionalProperties: false }),
    async handler({ deps, principal, body }) {
      if (body.new_password.toLowerCase() === principal.username.toLowerCase())
        throw new ValidationFailed([valueErrorEntry(['body', 'new_password'], 'the new password must not equal the username')])
      await changeOwnPassword(deps, principal.userId, principal.sessionId, body.current_password, body.new_password)
    },
    audit: { action: 'auth.change_password', failures: true, target: (c) => c.principal.username },
  }),
  route({
    method: 'POST', path: '/api/auth/tokens', errors: [409], tag: 'auth', summary: 'Create an API token (shown once)', access: 'login', status: 201, response: TokenCreatedOut,
    body: T.Object({ name: PlainText(1, 128, true), expires_in_days: T.Optional(Nullable(T.Integer({ minimum: 1, maximum: 3650 }))) }, { additionalProperties: false }),
    handler: ({ deps, principal, body }) => createApiToken(deps, principal.userId, body.name, body.expires_in_days),
    audit: { action: 'token.create', target: (c) => c.body.name },
  }),
  route({
    method: 'GET', path: '/api/auth/tokens', tag: 'auth', summary: 'List your API tokens', access: 'login', response: TokenListOut,
    handler: ({ deps, principal }) => listApiTokens(deps, principal.userId),
  }),
  route({
    method: 'DELETE', path: '/api/auth/tokens/:token_id', errors: [404], tag: 'auth', summary: 'Revoke one of your API tokens', access: 'login', status: 204,
    params: UuidPath('token_id'),
    handler: ({ deps, principal, params }) => revokeApiToken(deps, principal.userId, params.token_id),
    audit: { action: 'token.revoke', target: (c) => c.params.token_id },
  }),
]
