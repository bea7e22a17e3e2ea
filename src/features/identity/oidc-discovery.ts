/**
 * What Saltdeck reads of an OpenID Connect issuer: its discovery document (read once per issuer and kept) and its
 * signing keys (JWKS, read again only when a token names a key not yet known). Every address is checked by the
 * outbound destination rules, no redirect is followed, and a failure is told in Saltdeck's own words, never the remote
 * body.
 */
import type { JSONWebKeySet } from 'jose'
import type { AppDeps } from '../../deps'
import { checkUrl, networkReason } from '../../lib/outbound'

/** The discovery document's address for an issuer (OpenID Connect Discovery 1.0 §4). */
export const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`

/** How a sign-in step failed: `sentence` is for the person (the login page), `reason` for the log only. */
export class OidcFailure extends Error {
  constructor(readonly sentence: string, readonly reason: string, readonly outcome: 'invalid' | 'unavailable') {
    super(sentence)
  }
}

/** The sentence of any failure to reach or read the issuer. */
export const UNREACHABLE = 'The identity provider could not be reached; try again later'

/** What sign-in needs of the discovery document. */
export interface IssuerMeta {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  userinfo_endpoint?: string
  token_endpoint_auth_methods_supported?: string[]
  id_token_signing_alg_values_supported?: string[]
}

/** A failure already told in Saltdeck's words. */
class Told extends Error {}

/** Documents and key sets are small: a bigger answer is not one. */
const MAX_BYTES = 1024 * 1024

/**
 * GETs (or POSTs, with `init`) a JSON object from the issuer: destination checked, 10 s, no redirect, at most 1 MiB.
 * Throws a plain Error in Saltdeck's words, naming `what`.
 */
export async function issuerJson(deps: AppDeps, url: string, what: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> | null }> {
  let res: Response
  try {
    if (!/^https?:\/\//i.test(url)) throw new Told(`The ${what} address is not http(s)`)
    await checkUrl(url, deps.config.outboundAllow)
    res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json', ...(init?.headers as Record<string, string>) } })
  } catch (e) {
    if (e instanceof Told) throw e
    throw new Error(`Cannot read the ${what}: ${networkReason(e)}`)
  }
  let text: string
  try {
    const declared = Number(res.headers.get('content-length') ?? 0)
    if (declared > MAX_BYTES) throw new Error('too big')
    text = await res.text()
    if (text.length > MAX_BYTES) throw new Error('too big')
  } catch (e) {
    await res.body?.cancel().catch(() => {})
    throw new Error(`The ${what} is ${(e as Error).message === 'too big' ? 'larger than 1 MiB' : 'cut short'}`)
  }
  let body: unknown = null
  try {
    body = JSON.parse(text)
  } catch {
    body = null
  }
  return { status: res.status, body: body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null }
}

/** Whether a value is an absolute http(s) URL. */
function isHttpUrl(v: unknown): boolean {
  if (typeof v !== 'string') return false
  try {
    return /^https?:$/.test(new URL(v).protocol)
  } catch {
    return false
  }
}

/** Reads and checks an issuer's discovery document (no cache); throws in Saltdeck's words. */
async function readDiscovery(deps: AppDeps, issuer: string): Promise<IssuerMeta> {
  const { status, body: doc } = await issuerJson(deps, discoveryUrl(issuer), 'discovery document')
  if (status !== 200) throw new Error(`The discovery document answered HTTP ${status}`)
  if (!doc) throw new Error('The discovery document is not JSON')
  // OpenID Connect Discovery §4.3: the issuer in the document must be the one configured, exactly.
  if (doc.issuer !== issuer) throw new Error('The discovery document names another issuer')
  const missing = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'].filter((k) => typeof doc[k] !== 'string')
  if (missing.length) throw new Error(`The discovery document lacks ${missing.join(', ')}`)
  const notUrl = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'].filter((k) => doc[k] !== undefined && !isHttpUrl(doc[k]))
  if (notUrl.length) throw new Error(`The discovery document's ${notUrl.join(', ')} is not an http(s) URL`)
  return doc as unknown as IssuerMeta
}

const discovered = new Map<string, IssuerMeta>()

/** An issuer's discovery document, read once and kept for the life of the process (a failure is not kept). */
export async function discovery(deps: AppDeps, issuer: string): Promise<IssuerMeta> {
  const known = discovered.get(issuer)
  if (known) return known
  const meta = await readDiscovery(deps, issuer)
  discovered.set(issuer, meta)
  return meta
}

/** Reads a JWKS and checks it holds keys; throws in Saltdeck's words. */
async function readKeys(deps: AppDeps, jwksUri: string): Promise<JSONWebKeySet> {
  const { status, body } = await issuerJson(deps, jwksUri, 'key set (JWKS)')
  if (status !== 200) throw new Error(`The key set (JWKS) answered HTTP ${status}`)
  if (!body || !Array.isArray(body.keys)) throw new Error('The key set (JWKS) is not a JSON Web Key Set')
  if (!body.keys.length) throw new Error('The key set (JWKS) holds no key')
  return body as unknown as JSONWebKeySet
}

const keySets = new Map<string, { keys: JSONWebKeySet; at: number }>()

/**
 * An issuer's signing keys, kept; `fresh` reads them again (a token named a key not held: the issuer rotated its
 * keys), though not more than once a minute, so forged key ids cannot make Saltdeck hammer the issuer.
 */
export async function issuerKeys(deps: AppDeps, jwksUri: string, fresh = false): Promise<JSONWebKeySet> {
  const known = keySets.get(jwksUri)
  const now = deps.clock.now()
  if (known && (!fresh || now - known.at < 60_000)) return known.keys
  const keys = await readKeys(deps, jwksUri)
  keySets.set(jwksUri, { keys, at: now })
  return keys
}

/** POST /api/admin/identity/oidc/test: reads discovery and the JWKS afresh (nothing kept is trusted) and says what it found. */
export async function testOidc(deps: AppDeps, cfg: Record<string, unknown>): Promise<{ ok: boolean; detail: string }> {
  const issuer = typeof cfg.issuer === 'string' && cfg.issuer ? cfg.issuer : null
  if (!issuer) return { ok: false, detail: 'No issuer configured' }
  try {
    const meta = await readDiscovery(deps, issuer)
    const keys = await readKeys(deps, meta.jwks_uri)
    // Kept for the next sign-in: they were just read.
    discovered.set(issuer, meta)
    keySets.set(meta.jwks_uri, { keys, at: deps.clock.now() })
    const n = keys.keys.length
    return { ok: true, detail: `The issuer's discovery document names its authorization, token and key endpoints; its key set holds ${n} key${n === 1 ? '' : 's'}` }
  } catch (e) {
    return { ok: false, detail: (e as Error).message }
  }
}
