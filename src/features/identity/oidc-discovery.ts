/** The OpenID Connect provider test: reads the issuer's discovery document and checks what sign-in needs of it. */
import type { AppDeps } from '../../deps'
import { checkUrl, networkReason } from '../../lib/outbound'

/** The discovery document's address for an issuer (OpenID Connect Discovery 1.0 §4). */
export const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`

/** POST /api/admin/identity/oidc/test: fetches discovery (no redirect followed, 10 s) and checks issuer and endpoints. */
export async function testOidc(deps: AppDeps, cfg: Record<string, unknown>): Promise<{ ok: boolean; detail: string }> {
  const issuer = typeof cfg.issuer === 'string' && cfg.issuer ? cfg.issuer : null
  if (!issuer) return { ok: false, detail: 'No issuer configured' }
  const url = discoveryUrl(issuer)
  let res: Response
  try {
    await checkUrl(url, deps.config.outboundAllow)
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } })
  } catch (e) {
    return { ok: false, detail: `Cannot read the discovery document: ${networkReason(e)}` }
  }
  if (res.status !== 200) {
    await res.body?.cancel()
    return { ok: false, detail: `The discovery document answered HTTP ${res.status}` }
  }
  let doc: Record<string, unknown>
  try {
    doc = (await res.json()) as Record<string, unknown>
  } catch {
    return { ok: false, detail: 'The discovery document is not JSON' }
  }
  // OpenID Connect Discovery §4.3: the issuer in the document must be the one configured, exactly.
  if (doc.issuer !== issuer) return { ok: false, detail: 'The discovery document names another issuer' }
  const missing = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'].filter((k) => typeof doc[k] !== 'string')
  if (missing.length) return { ok: false, detail: `The discovery document lacks ${missing.join(', ')}` }
  return { ok: true, detail: 'The discovery document names this issuer and its authorization, token and key endpoints' }
}
