/**
 * A real OpenID provider for the tests (test/oidc/provider.mjs: panva's oidc-provider under Node on a free loopback
 * port), and a browser-less walk through it: the test follows the redirects with the provider's cookies, and the
 * provider's own interaction signs in the account the test chose.
 */
import { expect } from 'bun:test'
import { join } from 'node:path'

const DIR = join(import.meta.dir, '..', 'oidc')

/** Installs the provider's packages; false (with the reason printed) when node is missing outside CI. */
export function oidcProviderReady(): boolean {
  const setup = Bun.spawnSync(['bash', join(DIR, 'setup.sh')], { stdout: 'pipe', stderr: 'pipe' })
  if (setup.exitCode === 3 && process.env.CI !== 'true') {
    console.warn(`OIDC sign-in against a real provider SKIPPED — ${setup.stderr.toString().trim()}`)
    return false
  }
  if (setup.exitCode !== 0) throw new Error(`test/oidc/setup.sh failed: ${setup.stderr}`)
  return true
}

/** An account the provider signs in. */
export interface OidcAccount {
  id: string
  username: string
  name: string
  groups: string[]
}

/** A running provider. */
export interface OidcProvider {
  issuer: string
  clientId: string
  clientSecret: string
  /** The account the next login signs in. */
  nextUser(a: OidcAccount): Promise<void>
  /** Claims the next token answer's ID token carries changed (signed again with the issuer's key). */
  nextIdToken(claims: Record<string, unknown>): Promise<void>
  /** A new signing key, published beside the first and used for every later ID token. */
  rotateKey(): Promise<void>
  stop(): void
}

/** Starts a provider whose one client may send people back to `redirectUri`; `claimsInUserinfoOnly` keeps profile and groups out of the ID token. */
export async function startOidcProvider(redirectUri: string, claimsInUserinfoOnly = false): Promise<OidcProvider> {
  const clientId = 'saltdeck'
  const clientSecret = 'oidc-client-secret-do-not-leak'
  const proc = Bun.spawn(['node', join(DIR, 'provider.mjs'), JSON.stringify({ redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret, claims_in_userinfo_only: claimsInUserinfoOnly })], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let text = ''
  const deadline = Date.now() + 30_000
  while (!text.includes('\n')) {
    if (Date.now() > deadline) throw new Error('the OIDC provider did not start within 30 s')
    const { value, done } = await reader.read()
    if (done) throw new Error(`the OIDC provider exited: ${text}`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const { issuer } = JSON.parse(text.split('\n')[0]!) as { issuer: string }
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${issuer}${path}`, { method: 'POST', body: JSON.stringify(body) })
    expect(r.status).toBe(204)
  }
  return {
    issuer, clientId, clientSecret,
    nextUser: (a) => post('/__test/user', a),
    nextIdToken: (c) => post('/__test/id-token', c),
    rotateKey: () => post('/__test/rotate', {}),
    stop: () => proc.kill(),
  }
}

/** The value a Set-Cookie list gives a cookie ('' when cleared), or undefined when it is not set. */
export function cookieValue(res: Response, name: string): string | undefined {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!)
}

/**
 * Follows the issuer's redirects from an authorization URL, keeping its cookies, until it sends the browser to
 * `redirectUri`; returns that URL (with code, state and iss).
 */
export async function walkProvider(authorizationUrl: string, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>()
  let url = authorizationUrl
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } })
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const i = pair!.indexOf('=')
      jar.set(pair!.slice(0, i), pair!.slice(i + 1))
    }
    const next = res.headers.get('location')
    if (!next) throw new Error(`the provider answered ${res.status} without a redirect at ${url}: ${(await res.text()).slice(0, 300)}`)
    url = new URL(next, url).href
    if (url.startsWith(redirectUri)) return new URL(url)
  }
  throw new Error('the provider never sent the browser back')
}
