// Sign-in with OpenID Connect (contract §14) against a real provider: panva's oidc-provider under Node (test/oidc).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { Logger } from '../../src/lib/log'
import { createSession } from '../../src/features/auth/service'
import { sql } from '../../src/db/sql'
import { cookieValue, oidcProviderReady, startOidcProvider, walkProvider, type OidcAccount, type OidcProvider } from '../helpers/oidc-provider'

const PUBLIC = 'https://saltdeck.example.test/sd'
const CALLBACK = `${PUBLIC}/api/auth/oidc/callback`
const ready = oidcProviderReady()

let idp: OidcProvider
beforeAll(async () => {
  if (ready) idp = await startOidcProvider(CALLBACK)
}, 60_000)
afterAll(() => idp?.stop())

/** A Saltdeck on the real clock (the provider's tokens are stamped with it), OIDC enabled, 'ops' mapped to operator. */
async function world() {
  const w = await testWorld({ publicUrl: PUBLIC })
  w.clock.t = Date.now()
  // The seeded sessions were made on the test clock's date: the admin's is made again.
  w.tokens.admin = (await createSession(w.deps, (await w.deps.db.row<{ id: string }>(sql`SELECT id FROM users WHERE username = 'admin'`))!.id)).token
  const logs: string[] = []
  w.deps.log = new Logger('json', (l) => logs.push(l))
  const put = await call(w, 'PUT', '/api/admin/identity/oidc', { body: { enabled: true, issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, display_name: 'Test IdP' } })
  expect(put.status).toBe(200)
  expect((await call(w, 'POST', '/api/admin/identity/mappings', { body: { provider: 'oidc', group: 'ops', role_id: w.roleId('operator') } })).status).toBe(201)
  return { ...w, logs }
}
type World = Awaited<ReturnType<typeof world>>

const get = (w: World, path: string, cookie?: string) => w.app.handle(new Request(`http://localhost${path}`, { headers: cookie ? { cookie } : {} }))

/** Starts a sign-in at Saltdeck and walks the provider; returns the callback URL and the flow cookie. */
async function toCallback(w: World, who: OidcAccount) {
  await idp.nextUser(who)
  const start = await get(w, '/api/auth/oidc/start')
  expect(start.status).toBe(302)
  const flow = cookieValue(start, 'saltdeck_oidc')!
  expect(flow).toBeString()
  const back = await walkProvider(start.headers.get('location')!, CALLBACK)
  return { start, flow, back }
}

/** Calls Saltdeck's callback as the browser would: the path under the public URL, with the flow cookie. */
const callback = (w: World, back: URL, flow: string) => get(w, back.pathname.replace(/^\/sd/, '') + back.search, `saltdeck_oidc=${flow}`)

const loginError = (res: Response) => {
  const loc = res.headers.get('location')!
  expect(loc.startsWith(`${PUBLIC}/#/login?error=`)).toBe(true)
  return decodeURIComponent(loc.slice(`${PUBLIC}/#/login?error=`.length))
}

const alice: OidcAccount = { id: 'sub-alice', username: 'alice', name: 'Alice A', groups: ['ops', 'unrelated'] }

describe.skipIf(!ready)('sign-in with OpenID Connect against a real provider', () => {
  test('a good sign-in: PKCE, state and nonce; the session works; the user is listed with source oidc and the mapped roles', async () => {
    const w = await world()
    const { start, flow, back } = await toCallback(w, alice)
    const auth = new URL(start.headers.get('location')!)
    expect(auth.origin).toBe(idp.issuer)
    expect(Object.fromEntries(auth.searchParams)).toMatchObject({ response_type: 'code', client_id: 'saltdeck', redirect_uri: CALLBACK, code_challenge_method: 'S256', scope: 'openid profile email groups' })
    for (const k of ['state', 'nonce', 'code_challenge']) expect(auth.searchParams.get(k)!.length).toBeGreaterThanOrEqual(43)
    const flowLine = start.headers.getSetCookie().find((c) => c.startsWith('saltdeck_oidc='))!
    expect(flowLine).toMatch(/HttpOnly/i)
    expect(flowLine).toMatch(/SameSite=Lax/i)
    expect(flowLine).toMatch(/Max-Age=600/i)
    // The sealed cookie says nothing readable (the verifier must not be in clear).
    expect(flow).not.toContain(auth.searchParams.get('state')!)

    const res = await callback(w, back, flow)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${PUBLIC}/#/`)
    expect(cookieValue(res, 'saltdeck_oidc')).toBe('')
    const session = cookieValue(res, 'saltdeck_session')!
    expect(session.length).toBeGreaterThan(20)
    const me = await call(w, 'GET', '/api/auth/me', { who: { cookie: session } })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ username: 'alice', display_name: 'Alice A' })
    const users = (await call(w, 'GET', '/api/users')).body.users as { username: string; source: string; roles: { name: string }[] }[]
    expect(users.find((u) => u.username === 'alice')).toMatchObject({ source: 'oidc', roles: [{ name: 'operator' }] })
    const audit = (await call(w, 'GET', '/api/audit?action=auth.login')).body.entries
    expect(audit[0]).toMatchObject({ username: 'alice', ok: true, detail: 'source: oidc; outcome: success' })
    expect((await call(w, 'GET', '/metrics')).body).toContain('saltdeck_sign_ins_total{provider="oidc",outcome="success"} 1')
    // No secret, code or token in the log.
    const logText = w.logs.join('\n')
    expect(logText).not.toContain(idp.clientSecret)
    expect(logText).not.toContain(back.searchParams.get('code')!)
  })

  test('a tampered state signs nobody in: back to the login page with a sentence', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, alice)
    back.searchParams.set('state', `${back.searchParams.get('state')}x`)
    const res = await callback(w, back, flow)
    expect(res.status).toBe(302)
    expect(loginError(res)).toBe('The sign-in expired or was started elsewhere; start again')
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
    expect(w.logs.join('\n')).toContain("the state is not this browser's sign-in")
    expect((await call(w, 'GET', '/api/users')).body.users.some((u: { username: string }) => u.username === 'alice')).toBe(false)
    expect((await call(w, 'GET', '/metrics')).body).toContain('saltdeck_sign_ins_total{provider="oidc",outcome="invalid"} 1')
    const audit = (await call(w, 'GET', '/api/audit?action=auth.login')).body.entries
    expect(audit[0]).toMatchObject({ ok: false, detail: 'The sign-in expired or was started elsewhere; start again; source: oidc; outcome: invalid' })
  })

  test('a callback without the flow cookie (another browser) signs nobody in', async () => {
    const w = await world()
    const { back } = await toCallback(w, alice)
    const res = await get(w, back.pathname.replace(/^\/sd/, '') + back.search)
    expect(loginError(res)).toBe('The sign-in expired or was started elsewhere; start again')
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
  })

  test('an ID token for another audience is refused', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, alice)
    await idp.nextIdToken({ aud: 'another-client' })
    const res = await callback(w, back, flow)
    expect(loginError(res)).toBe("The identity provider's answer could not be verified")
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
    expect(w.logs.join('\n')).toContain("the ID token's aud claim is wrong")
  })

  test('an ID token with another nonce (a replayed token) is refused', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, alice)
    await idp.nextIdToken({ nonce: 'a-nonce-of-another-sign-in' })
    const res = await callback(w, back, flow)
    expect(loginError(res)).toBe("The identity provider's answer could not be verified")
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
    expect(w.logs.join('\n')).toContain("the ID token's nonce is not this sign-in's")
  })

  test('an expired ID token is refused', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, alice)
    const now = Math.floor(Date.now() / 1000)
    await idp.nextIdToken({ iat: now - 7200, exp: now - 3600 })
    const res = await callback(w, back, flow)
    expect(loginError(res)).toBe("The identity provider's answer could not be verified")
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
    expect(w.logs.join('\n')).toContain('the ID token has expired')
  })

  test('a user whose groups map to nothing: 403 sentence on the login page, no session, no user', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, { id: 'sub-bob', username: 'bob', name: 'Bob B', groups: ['interns'] })
    const res = await callback(w, back, flow)
    expect(loginError(res)).toBe('No Saltdeck role for this account')
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
    expect((await call(w, 'GET', '/api/users')).body.users.some((u: { username: string }) => u.username === 'bob')).toBe(false)
    expect((await call(w, 'GET', '/metrics')).body).toContain('saltdeck_sign_ins_total{provider="oidc",outcome="no_role"} 1')
  })

  test('a replayed callback (the same code again) signs nobody in: the provider refuses the spent code', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, alice)
    expect((await callback(w, back, flow)).headers.get('location')).toBe(`${PUBLIC}/#/`)
    const again = await callback(w, back, flow)
    expect(loginError(again)).toBe('The identity provider did not sign you in')
    expect(cookieValue(again, 'saltdeck_session')).toBeUndefined()
    expect(w.logs.join('\n')).toContain('the token endpoint answered HTTP 400 (invalid_grant)')
  })

  test('an unexpected failure after the provider (the database) still answers the login page with a sentence; the log has the error', async () => {
    const w = await world()
    const { flow, back } = await toCallback(w, alice)
    await w.deps.db.exec(sql`DROP TABLE identity_mappings`)
    const res = await callback(w, back, flow)
    expect(res.status).toBe(302)
    expect(loginError(res)).toBe('The sign-in failed; try again later')
    expect(cookieValue(res, 'saltdeck_session')).toBeUndefined()
    expect(w.logs.join('\n')).toContain('OpenID Connect sign-in failed')
  })

  test('an issuer that gives the user name and groups only at userinfo: they are read there', async () => {
    const other = await startOidcProvider(CALLBACK, true)
    try {
      const w = await world()
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer: other.issuer, client_id: other.clientId, client_secret: other.clientSecret } })
      await other.nextUser({ id: 'sub-carol', username: 'carol', name: 'Carol C', groups: ['ops'] })
      const start = await get(w, '/api/auth/oidc/start')
      const back = await walkProvider(start.headers.get('location')!, CALLBACK)
      const res = await callback(w, back, cookieValue(start, 'saltdeck_oidc')!)
      expect(res.headers.get('location')).toBe(`${PUBLIC}/#/`)
      const me = await call(w, 'GET', '/api/auth/me', { who: { cookie: cookieValue(res, 'saltdeck_session')! } })
      expect(me.body).toMatchObject({ username: 'carol', display_name: 'Carol C' })
      const users = (await call(w, 'GET', '/api/users')).body.users as { username: string; roles: { name: string }[] }[]
      expect(users.find((u) => u.username === 'carol')).toMatchObject({ roles: [{ name: 'operator' }] })
    } finally {
      other.stop()
    }
  }, 60_000)

  test("a key rotation: a token signed with a key not yet held makes Saltdeck read the JWKS again, once a minute at most", async () => {
    const other = await startOidcProvider(CALLBACK)
    try {
      const w = await world()
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer: other.issuer, client_id: other.clientId, client_secret: other.clientSecret } })
      const signIn = async () => {
        await other.nextUser(alice)
        const start = await get(w, '/api/auth/oidc/start')
        const back = await walkProvider(start.headers.get('location')!, CALLBACK)
        return { back, flow: cookieValue(start, 'saltdeck_oidc')! }
      }
      // The first key is read and kept.
      let s = await signIn()
      expect((await callback(w, s.back, s.flow)).headers.get('location')).toBe(`${PUBLIC}/#/`)
      await other.rotateKey()
      // Within the minute the kept keys are not read again: the new key is unknown.
      s = await signIn()
      expect(loginError(await callback(w, s.back, s.flow))).toBe("The identity provider's answer could not be verified")
      expect(w.logs.join('\n')).toContain("the ID token's key is not in the issuer's JWKS")
      // A minute later they are, and the new key verifies.
      s = await signIn()
      w.clock.advance(61_000)
      expect((await callback(w, s.back, s.flow)).headers.get('location')).toBe(`${PUBLIC}/#/`)
    } finally {
      other.stop()
    }
  }, 60_000)

  test('the login page learns of the button; the Test reads discovery and the JWKS', async () => {
    const w = await world()
    expect((await call(w, 'GET', '/api/auth/providers', { who: 'anon' })).body).toEqual({ oidc: { display_name: 'Test IdP', start: '/api/auth/oidc/start' } })
    const t = await call(w, 'POST', '/api/admin/identity/oidc/test')
    expect(t.body).toEqual({ ok: true, detail: "The issuer's discovery document names its authorization, token and key endpoints; its key set holds 1 key" })
    await call(w, 'PUT', '/api/admin/identity/oidc', { body: { enabled: false } })
    expect((await call(w, 'GET', '/api/auth/providers', { who: 'anon' })).body).toEqual({ oidc: null })
    const start = await get(w, '/api/auth/oidc/start')
    expect(loginError(start)).toBe('Sign-in with OpenID Connect is not enabled')
  })
})

describe('the issuer as Saltdeck reads it (a real HTTP server standing in as the issuer)', () => {
  /** A server answering discovery (counted) and a JWKS or an error page carrying a marker. */
  function issuerServer(jwks: (issuer: string) => Response) {
    let reads = 0
    let issuer = ''
    const srv = Bun.serve({
      port: 0, hostname: '127.0.0.1',
      fetch(req) {
        const path = new URL(req.url).pathname
        if (path === '/.well-known/openid-configuration') {
          reads++
          return Response.json({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` })
        }
        if (path === '/jwks') return jwks(issuer)
        return new Response('no', { status: 404 })
      },
    })
    issuer = `http://127.0.0.1:${srv.port}`
    return { srv, issuer, reads: () => reads }
  }

  test('discovery is read once and kept across sign-ins', async () => {
    const { srv, issuer, reads } = issuerServer(() => Response.json({ keys: [] }))
    try {
      const w = await testWorld({ publicUrl: PUBLIC })
      // Scopes without openid: it is asked for all the same (no ID token otherwise).
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { enabled: true, issuer, client_id: 'saltdeck', scopes: 'profile groups' } })
      for (let i = 0; i < 3; i++) {
        const start = await w.app.handle(new Request('http://localhost/api/auth/oidc/start'))
        expect(start.headers.get('location')!.startsWith(`${issuer}/auth?`)).toBe(true)
        expect(new URL(start.headers.get('location')!).searchParams.get('scope')).toBe('openid profile groups')
      }
      expect(reads()).toBe(1)
      // Under TLS the flow cookie is Secure, as the session cookie is.
      const tls = await w.app.handle(new Request('https://localhost/api/auth/oidc/start'))
      expect(tls.headers.getSetCookie().find((c) => c.startsWith('saltdeck_oidc='))).toMatch(/; Secure/i)
      const plain = await w.app.handle(new Request('http://localhost/api/auth/oidc/start'))
      expect(plain.headers.getSetCookie().find((c) => c.startsWith('saltdeck_oidc='))).not.toMatch(/Secure/i)
    } finally {
      srv.stop(true)
    }
  })

  test("the Test says what failed in Saltdeck's words, never the issuer's body; a metadata-address JWKS is refused", async () => {
    const MARK = 'remote-body-marker-5f3a'
    const cases: [(issuer: string) => Response, string][] = [
      [() => new Response(`<h1>${MARK}</h1>`, { status: 500 }), 'The key set (JWKS) answered HTTP 500'],
      [() => new Response(MARK, { status: 200 }), 'The key set (JWKS) is not a JSON Web Key Set'],
      [() => Response.json({ keys: [] }), 'The key set (JWKS) holds no key'],
    ]
    for (const [jwks, detail] of cases) {
      const { srv, issuer } = issuerServer(jwks)
      try {
        const w = await testWorld()
        await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer } })
        const t = await call(w, 'POST', '/api/admin/identity/oidc/test')
        expect(t.body).toEqual({ ok: false, detail })
        expect(JSON.stringify(t.body)).not.toContain(MARK)
      } finally {
        srv.stop(true)
      }
    }
    let issuer = ''
    const srv = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ issuer, authorization_endpoint: `${issuer}/a`, token_endpoint: `${issuer}/t`, jwks_uri: 'http://169.254.169.254/latest/meta-data/' }) })
    issuer = `http://127.0.0.1:${srv.port}`
    try {
      const w = await testWorld()
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer } })
      const t = await call(w, 'POST', '/api/admin/identity/oidc/test')
      expect(t.body.ok).toBe(false)
      expect(t.body.detail).toStartWith('Cannot read the key set (JWKS): 169.254.169.254 is a link-local or cloud metadata address')
    } finally {
      srv.stop(true)
    }
    const odd = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ issuer, authorization_endpoint: 'javascript:alert(1)', token_endpoint: `${issuer}/t`, jwks_uri: `${issuer}/k` }) })
    issuer = `http://127.0.0.1:${odd.port}`
    try {
      const w = await testWorld()
      await call(w, 'PUT', '/api/admin/identity/oidc', { body: { issuer } })
      expect((await call(w, 'POST', '/api/admin/identity/oidc/test')).body).toEqual({ ok: false, detail: "The discovery document's authorization_endpoint is not an http(s) URL" })
    } finally {
      odd.stop(true)
    }
  })

  test('an issuer that cannot be reached sends the person back to the login page with a sentence', async () => {
    const w = await testWorld({ publicUrl: PUBLIC })
    const dead = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const issuer = `http://127.0.0.1:${dead.port}`
    dead.stop(true)
    await call(w, 'PUT', '/api/admin/identity/oidc', { body: { enabled: true, issuer, client_id: 'saltdeck' } })
    const start = await w.app.handle(new Request('http://localhost/api/auth/oidc/start'))
    expect(start.status).toBe(302)
    expect(loginError(start)).toBe('The identity provider could not be reached; try again later')
    expect(cookieValue(start, 'saltdeck_oidc')).toBeUndefined()
  })
})
