/**
 * The OpenID Connect authorization code flow (contract §14): the redirect to the issuer with PKCE (S256), `state` and
 * `nonce`, all three sealed in a short-lived cookie; then the code exchanged at the token endpoint and the ID token
 * verified by jose against the issuer's JWKS (signature, iss, aud, exp, nonce). What the person is told on failure is
 * a sentence; why it failed goes to the log.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import type { AppDeps } from '../../deps'
import { decrypt, encrypt } from '../../lib/secret'
import { discovery, issuerJson, issuerKeys, OidcFailure, UNREACHABLE, type IssuerMeta } from './oidc-discovery'
import type { ProviderConfig } from './providers'

/** The name of the cookie that carries one sign-in's state, nonce and PKCE verifier (sealed) between start and callback. */
export const FLOW_COOKIE = 'saltdeck_oidc'
/** How long a person has between start and callback. */
export const FLOW_TTL_S = 600

/** One sign-in in progress, as sealed in the cookie. */
interface Flow {
  /** state */
  s: string
  /** nonce */
  n: string
  /** PKCE code verifier */
  v: string
  /** expires at (epoch ms) */
  e: number
  /** issuer and client id the flow started with: settings changed in between end it */
  i: string
  c: string
}

/** What the issuer proved about the person. */
export interface OidcIdentity {
  username: string
  displayName: string
  groups: string[]
}

const NOT_ENABLED = 'Sign-in with OpenID Connect is not enabled'
const START_AGAIN = 'The sign-in expired or was started elsewhere; start again'
const REFUSED = 'The identity provider did not sign you in'
const UNVERIFIED = "The identity provider's answer could not be verified"

const random = () => randomBytes(32).toString('base64url')
/** PKCE S256 (RFC 7636 §4.2): the challenge is the verifier's SHA-256, base64url. */
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** The oidc settings sign-in needs, or a failure when it is off or incomplete. */
function usable(cfg: ProviderConfig): { issuer: string; clientId: string } {
  const issuer = typeof cfg.issuer === 'string' && cfg.issuer ? cfg.issuer : null
  const clientId = typeof cfg.client_id === 'string' && cfg.client_id ? cfg.client_id : null
  if (cfg.enabled !== true || !issuer || !clientId) throw new OidcFailure(NOT_ENABLED, 'OpenID Connect is disabled or lacks issuer or client_id', 'invalid')
  return { issuer, clientId }
}

async function meta(deps: AppDeps, issuer: string): Promise<IssuerMeta> {
  try {
    return await discovery(deps, issuer)
  } catch (e) {
    throw new OidcFailure(UNREACHABLE, (e as Error).message, 'unavailable')
  }
}

/** GET /api/auth/oidc/start: where to send the browser, and the sealed cookie value binding this sign-in to it. */
export async function beginOidc(deps: AppDeps, cfg: ProviderConfig, redirectUri: string): Promise<{ location: string; cookie: string }> {
  const { issuer, clientId } = usable(cfg)
  const m = await meta(deps, issuer)
  const flow: Flow = { s: random(), n: random(), v: random(), e: deps.clock.now() + FLOW_TTL_S * 1000, i: issuer, c: clientId }
  const url = new URL(m.authorization_endpoint)
  // Without the openid scope there is no ID token: it is always asked for.
  const scopes = String(cfg.scopes ?? '').split(/\s+/).filter(Boolean)
  const params = {
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: (scopes.includes('openid') ? scopes : ['openid', ...scopes]).join(' '),
    state: flow.s, nonce: flow.n, code_challenge: challengeOf(flow.v), code_challenge_method: 'S256',
  }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  // Sealed with the secret key: the browser carries it but can neither read the verifier nor forge a state.
  return { location: url.href, cookie: Buffer.from(encrypt(deps.secretKey, JSON.stringify(flow)), 'base64').toString('base64url') }
}

/** Opens the flow cookie; a failure when it is absent, forged, expired or from other settings. */
function openFlow(deps: AppDeps, sealed: string | undefined, issuer: string, clientId: string): Flow {
  if (!sealed) throw new OidcFailure(START_AGAIN, 'no sign-in cookie (expired, or another browser)', 'invalid')
  let flow: Flow
  try {
    flow = JSON.parse(decrypt(deps.secretKey, Buffer.from(sealed, 'base64url').toString('base64'))) as Flow
  } catch {
    throw new OidcFailure(START_AGAIN, 'the sign-in cookie does not open with secret.key', 'invalid')
  }
  if (!(flow.e > deps.clock.now())) throw new OidcFailure(START_AGAIN, 'the sign-in cookie has expired', 'invalid')
  if (flow.i !== issuer || flow.c !== clientId) throw new OidcFailure(START_AGAIN, 'the OpenID Connect settings changed during the sign-in', 'invalid')
  return flow
}

/** The callback's query as the issuer sent it (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export interface CallbackQuery {
  code?: string
  state?: string
  error?: string
  iss?: string
}

/** An OAuth error code is a short word of a fixed alphabet (RFC 6749 §5.2): only such is logged. */
const errorCode = (v: unknown) => (typeof v === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(v) ? v : 'an unreadable error')

/** Exchanges the code at the token endpoint, authenticating as the discovery document allows. */
async function exchange(deps: AppDeps, m: IssuerMeta, cfg: ProviderConfig, clientId: string, code: string, redirectUri: string, verifier: string) {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier })
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  const secret = typeof cfg.client_secret === 'string' && cfg.client_secret ? cfg.client_secret : null
  // OpenID Connect Discovery §3: absent, the issuer supports client_secret_basic.
  const methods = m.token_endpoint_auth_methods_supported ?? ['client_secret_basic']
  if (!secret) form.set('client_id', clientId)
  else if (methods.includes('client_secret_basic')) {
    // RFC 6749 §2.3.1: each part form-encoded before Basic.
    const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+')
    headers.authorization = `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`
  } else if (methods.includes('client_secret_post')) {
    form.set('client_id', clientId)
    form.set('client_secret', secret)
  } else throw new OidcFailure(UNREACHABLE, 'the token endpoint takes neither client_secret_basic nor client_secret_post', 'unavailable')
  let answer: Awaited<ReturnType<typeof issuerJson>>
  try {
    answer = await issuerJson(deps, m.token_endpoint, 'token endpoint', { method: 'POST', headers, body: form.toString() })
  } catch (e) {
    throw new OidcFailure(UNREACHABLE, (e as Error).message, 'unavailable')
  }
  if (answer.status !== 200) throw new OidcFailure(REFUSED, `the token endpoint answered HTTP ${answer.status} (${errorCode(answer.body?.error)})`, 'invalid')
  const idToken = answer.body?.id_token
  if (typeof idToken !== 'string') throw new OidcFailure(REFUSED, 'the token endpoint answered no id_token', 'invalid')
  const accessToken = typeof answer.body?.access_token === 'string' ? answer.body.access_token : null
  return { idToken, accessToken }
}

/** Algorithms an ID token may be signed with: asymmetric ones only (the JWKS holds public keys; never `none`). */
const ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** Why jose refused a token, for the log. */
function whyRefused(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return 'the ID token has expired'
  if (e instanceof joseErrors.JWTClaimValidationFailed) return `the ID token's ${e.claim} claim is wrong (${e.reason})`
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return "the ID token's signature does not verify"
  if (e instanceof joseErrors.JWKSNoMatchingKey) return "the ID token's key is not in the issuer's JWKS"
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return "the ID token's algorithm is not allowed"
  if (e instanceof joseErrors.JOSEError) return `the ID token was refused (${e.code})`
  return 'the ID token could not be read'
}

/** Verifies the ID token: signature by a key of the issuer's JWKS (read again once for an unknown key), iss, aud, exp, nonce. */
async function verifyIdToken(deps: AppDeps, m: IssuerMeta, issuer: string, clientId: string, idToken: string, nonce: string): Promise<JWTPayload> {
  const check = async (fresh: boolean) => {
    let keys
    try {
      keys = await issuerKeys(deps, m.jwks_uri, fresh)
    } catch (e) {
      throw new OidcFailure(UNREACHABLE, (e as Error).message, 'unavailable')
    }
    return jwtVerify(idToken, createLocalJWKSet(keys), {
      issuer, audience: clientId, algorithms: ALGS, currentDate: new Date(deps.clock.now()), clockTolerance: 60, requiredClaims: ['sub', 'exp', 'iat'],
    })
  }
  let payload: JWTPayload
  try {
    try {
      payload = (await check(false)).payload
    } catch (e) {
      if (!(e instanceof joseErrors.JWKSNoMatchingKey)) throw e
      payload = (await check(true)).payload
    }
  } catch (e) {
    if (e instanceof OidcFailure) throw e
    throw new OidcFailure(UNVERIFIED, whyRefused(e), 'invalid')
  }
  // OpenID Connect Core §3.1.3.7: with several audiences, the token must have been issued to this client.
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== clientId) throw new OidcFailure(UNVERIFIED, "the ID token's azp is not this client", 'invalid')
  if (payload.nonce !== nonce) throw new OidcFailure(UNVERIFIED, "the ID token's nonce is not this sign-in's", 'invalid')
  return payload
}

/** A claim by name, or by a dotted path into nested objects (Keycloak's `realm_access.roles`) when no claim has the whole name. */
function claim(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name]
  let v: unknown = claims
  for (const part of name.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined
  return v
}

/** The claims not in the ID token, from the userinfo endpoint (whose `sub` must be the token's, Core §5.3.2). */
async function userinfo(deps: AppDeps, m: IssuerMeta, accessToken: string, sub: unknown): Promise<Record<string, unknown>> {
  let answer: Awaited<ReturnType<typeof issuerJson>>
  try {
    answer = await issuerJson(deps, m.userinfo_endpoint!, 'userinfo endpoint', { headers: { authorization: `Bearer ${accessToken}` } })
  } catch (e) {
    throw new OidcFailure(UNREACHABLE, (e as Error).message, 'unavailable')
  }
  if (answer.status !== 200 || !answer.body) throw new OidcFailure(REFUSED, `the userinfo endpoint answered HTTP ${answer.status}`, 'invalid')
  if (answer.body.sub !== sub) throw new OidcFailure(UNVERIFIED, "the userinfo answer's sub is not the ID token's", 'invalid')
  return answer.body
}

/** A groups claim as a list of names: an array of strings, or one string. */
const groupsOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : typeof v === 'string' ? [v] : [])

/**
 * GET /api/auth/oidc/callback: checks the state against the sealed cookie, exchanges the code, verifies the ID token
 * and reads the user name and groups from the configured claims. Throws OidcFailure.
 */
export async function finishOidc(deps: AppDeps, cfg: ProviderConfig, redirectUri: string, q: CallbackQuery, sealed: string | undefined): Promise<OidcIdentity> {
  const { issuer, clientId } = usable(cfg)
  const flow = openFlow(deps, sealed, issuer, clientId)
  if (typeof q.state !== 'string' || q.state !== flow.s) throw new OidcFailure(START_AGAIN, "the state is not this browser's sign-in", 'invalid')
  // RFC 9207: an issuer that names itself must name this one (mix-up defence).
  if (q.iss !== undefined && q.iss !== issuer) throw new OidcFailure(UNVERIFIED, 'the callback names another issuer', 'invalid')
  if (q.error !== undefined) throw new OidcFailure(REFUSED, `the identity provider answered ${errorCode(q.error)}`, 'invalid')
  if (typeof q.code !== 'string' || !q.code) throw new OidcFailure(REFUSED, 'the callback carries no code', 'invalid')
  const m = await meta(deps, issuer)
  const { idToken, accessToken } = await exchange(deps, m, cfg, clientId, q.code, redirectUri, flow.v)
  let claims: Record<string, unknown> = await verifyIdToken(deps, m, issuer, clientId, idToken, flow.n)
  const usernameClaim = String(cfg.username_claim ?? 'preferred_username')
  const groupsClaim = String(cfg.groups_claim ?? 'groups')
  // Some issuers put profile claims only in userinfo: asked only when the ID token lacks one of the two.
  if ((claim(claims, usernameClaim) === undefined || claim(claims, groupsClaim) === undefined) && m.userinfo_endpoint && accessToken)
    claims = { ...(await userinfo(deps, m, accessToken, claims.sub)), ...claims }
  const username = claim(claims, usernameClaim)
  if (typeof username !== 'string' || !username) throw new OidcFailure(`The identity provider gave no user name (claim ${usernameClaim})`, `no string ${usernameClaim} claim`, 'invalid')
  const name = claims.name
  return { username, displayName: typeof name === 'string' && name ? name : username, groups: groupsOf(claim(claims, groupsClaim)) }
}
