/**
 * Sign-in with OpenID Connect (contract §14): the public start and callback routes, and what the login page needs to
 * know (whether to show the button). Both routes answer redirects: to the issuer, to the dashboard, or to the login
 * page with a sentence.
 */
import { Type as T } from '@sinclair/typebox'
import { route, type Ctx } from '../../http/route'
import { httpError } from '../../http/errors'
import type { AppDeps } from '../../deps'
import { providerConfig } from './service'
import { recordSignIn, signInDirectoryUser } from './signin'
import { OidcFailure } from './oidc-discovery'
import { beginOidc, finishOidc, FLOW_COOKIE, FLOW_TTL_S } from './oidc-flow'
import { ProvidersOut } from '../auth/schema'

/** The path the issuer sends the browser back to; registered at the issuer as SALTDECK_PUBLIC_URL + this. */
export const CALLBACK_PATH = '/api/auth/oidc/callback'

/** Where people reach Saltdeck: SALTDECK_PUBLIC_URL (maybe with a proxy path), else this request's origin. */
const base = (deps: AppDeps, request: Request) => (deps.config.publicUrl ?? new URL(request.url).origin).replace(/\/+$/, '')

/** Answers a 302 to `location`. */
function redirect(set: { status: number; headers: Record<string, string> }, location: string) {
  set.status = 302
  set.headers.location = location
  set.headers['cache-control'] = 'no-store'
}

/** Sends the browser to the login page with a sentence (the dashboard shows it). */
const toLogin = (deps: AppDeps, request: Request, sentence: string) => `${base(deps, request)}/#/login?error=${encodeURIComponent(sentence)}`

/** A failure before or after the issuer: recorded (audit, metrics, log with the reason), then told on the login page. */
async function failed(c: Ctx<'public', unknown, unknown, unknown>, e: unknown) {
  if (!(e instanceof OidcFailure)) {
    // The sign-in path's own errors (403 no role, 401 a name of another source) were recorded where they were thrown.
    const known = httpError(e)
    if (known && known.status < 500) return redirect(c.set, toLogin(c.deps, c.request, known.detail))
    // Anything else (the database failing, a bug): the person still gets a page and a sentence, the log the error.
    c.deps.log.error('OpenID Connect sign-in failed', { error: String((e as Error)?.stack ?? e) })
    return redirect(c.set, toLogin(c.deps, c.request, known?.detail ?? 'The sign-in failed; try again later'))
  }
  await recordSignIn(c.deps, { source: 'oidc', username: '', outcome: e.outcome, client: c.client, sentence: e.sentence, reason: e.reason })
  redirect(c.set, toLogin(c.deps, c.request, e.sentence))
}

// The issuer may add parameters (session_state and others): they are accepted and ignored.
const CallbackQuery = T.Object({
  code: T.Optional(T.String({ description: 'The authorization code' })),
  state: T.Optional(T.String({ description: 'The state Saltdeck sent' })),
  iss: T.Optional(T.String({ description: 'The issuer (RFC 9207)' })),
  error: T.Optional(T.String({ description: 'The error code when the issuer did not sign the person in' })),
}, { additionalProperties: true })

/** The OpenID Connect routes. */
export const oidcRoutes = [
  route({
    method: 'GET', path: '/api/auth/providers', tag: 'auth', summary: 'The sign-in choices the login page offers (public)', access: 'public',
    response: ProvidersOut,
    async handler({ deps }) {
      const cfg = await providerConfig(deps, 'oidc')
      const on = cfg.enabled === true && typeof cfg.issuer === 'string' && typeof cfg.client_id === 'string'
      return { oidc: on ? { display_name: String(cfg.display_name ?? 'SSO'), start: '/api/auth/oidc/start' } : null }
    },
  }),
  route({
    method: 'GET', path: '/api/auth/oidc/start', tag: 'auth', status: 302, access: 'public',
    summary: "Start signing in with OpenID Connect: redirects to the issuer's authorization endpoint (code flow, PKCE S256, state and nonce in a short-lived cookie)",
    async handler(c) {
      try {
        const { location, cookie } = await beginOidc(c.deps, await providerConfig(c.deps, 'oidc'), base(c.deps, c.request) + CALLBACK_PATH)
        c.otherCookie(FLOW_COOKIE).set(cookie, FLOW_TTL_S)
        redirect(c.set, location)
      } catch (e) {
        await failed(c, e)
      }
    },
  }),
  route({
    method: 'GET', path: CALLBACK_PATH, tag: 'auth', status: 302, access: 'public', query: CallbackQuery,
    summary: 'Where the issuer sends the browser back: checks state, exchanges the code, verifies the ID token, signs in; redirects to the dashboard, or to the login page with a sentence',
    async handler(c) {
      const flow = c.otherCookie(FLOW_COOKIE)
      // One use: whatever happens, this sign-in's cookie is spent.
      flow.clear()
      try {
        const who = await finishOidc(c.deps, await providerConfig(c.deps, 'oidc'), base(c.deps, c.request) + CALLBACK_PATH, c.query, flow.value)
        const { token, maxAge } = await signInDirectoryUser(c.deps, { provider: 'oidc', ...who }, c.client)
        c.cookie.set(token, maxAge)
        redirect(c.set, `${base(c.deps, c.request)}/#/`)
      } catch (e) {
        await failed(c, e)
      }
    },
  }),
]
