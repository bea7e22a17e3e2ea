// A real OpenID provider for Saltdeck's tests: panva's oidc-provider (certified) on a free loopback port, under Node.
// Usage: node provider.mjs '{"redirect_uri": "...", "client_id": "...", "client_secret": "...", "claims_in_userinfo_only"?: true}'
// Prints one JSON line {issuer} when it listens. Not a double: discovery, JWKS, authorization, PKCE, the token
// endpoint and ID token signing are oidc-provider's own. The test drives it without a person:
//   POST /__test/user {id, username, name, groups}  the account the next login interaction signs in (auto-login).
//   POST /__test/id-token {aud?, exp?}             the next token answer's ID token is signed again by this issuer's
//                                                   key with these claims changed (a token meant for another client,
//                                                   or one already expired): faults a real provider can hand out.
//   POST /__test/rotate                            a new signing key: published in the JWKS beside the first, and
//                                                   every later ID token is signed with it (a key rotation).
import { createServer } from 'node:http'
import Provider from 'oidc-provider'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'

const opts = JSON.parse(process.argv[2] ?? '{}')
const { privateKey } = await generateKeyPair('RS256', { extractable: true })
const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' }

const accounts = new Map()
let nextUser = null
let nextIdToken = null

const server = createServer()
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const issuer = `http://127.0.0.1:${server.address().port}`

const provider = new Provider(issuer, {
  clients: [{
    client_id: opts.client_id, client_secret: opts.client_secret, redirect_uris: [opts.redirect_uri],
    grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: opts.auth_method ?? 'client_secret_basic',
  }],
  jwks: { keys: [jwk] },
  cookies: { keys: ['saltdeck-test-cookie-key'] },
  scopes: ['openid', 'profile', 'email', 'groups'],
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'], groups: ['groups'] },
  // Scope claims go into the ID token (as Keycloak and Authentik do with their mappers), or, as OpenID Connect Core
  // §5.4 has it for the code flow, only to the userinfo endpoint (oidc-provider's default).
  conformIdTokenClaims: opts.claims_in_userinfo_only === true,
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // Consent is given: a grant for every requested scope (oidc-provider's documented way to skip the consent prompt).
  async loadExistingGrant(ctx) {
    const id = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId)
    if (id) return ctx.oidc.provider.Grant.find(id)
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId })
    grant.addOIDCScope('openid profile email groups')
    await grant.save()
    return grant
  },
  async findAccount(ctx, id) {
    const a = accounts.get(id)
    if (!a) return undefined
    return { accountId: id, claims: async () => ({ sub: id, preferred_username: a.username, name: a.name, email: `${a.username}@example.test`, groups: a.groups }) }
  },
})
provider.on('server_error', (ctx, err) => console.error('oidc-provider server_error', err))

// After a rotation: the new key's public half in the JWKS.
let rotated = null
// Re-signs the token answer's ID token when the test asked for a changed claim or the key was rotated.
provider.use(async (ctx, next) => {
  await next()
  if (ctx.path === '/jwks' && rotated && ctx.status === 200) {
    const body = typeof ctx.body === 'string' ? JSON.parse(ctx.body) : ctx.body
    ctx.body = { keys: [...body.keys, rotated.publicJwk] }
    return
  }
  if (ctx.path !== '/token' || (!nextIdToken && !rotated) || ctx.status !== 200 || !ctx.body?.id_token) return
  const claims = { ...decodeJwt(ctx.body.id_token), ...nextIdToken }
  nextIdToken = null
  const [key, kid] = rotated ? [rotated.privateKey, rotated.publicJwk.kid] : [privateKey, jwk.kid]
  ctx.body = { ...ctx.body, id_token: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key) }
})

const handle = provider.callback()
const readJson = (req) => new Promise((resolve) => {
  let s = ''
  req.on('data', (c) => (s += c))
  req.on('end', () => resolve(s ? JSON.parse(s) : {}))
})
server.on('request', async (req, res) => {
  try {
    if (req.method === 'POST' && req.url === '/__test/user') {
      const u = await readJson(req)
      accounts.set(u.id, u)
      nextUser = u.id
      res.writeHead(204).end()
    } else if (req.method === 'POST' && req.url === '/__test/id-token') {
      nextIdToken = await readJson(req)
      res.writeHead(204).end()
    } else if (req.method === 'POST' && req.url === '/__test/rotate') {
      const pair = await generateKeyPair('RS256', { extractable: true })
      rotated = { privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid: 'test-key-2', alg: 'RS256', use: 'sig' } }
      res.writeHead(204).end()
    } else if (req.url.startsWith('/interaction/')) {
      // Auto-login: the account the test chose signs in, no form.
      const details = await provider.interactionDetails(req, res)
      if (details.prompt.name !== 'login' || !nextUser) throw new Error(`unexpected interaction ${details.prompt.name}`)
      await provider.interactionFinished(req, res, { login: { accountId: nextUser } }, { mergeWithLastSubmission: false })
    } else handle(req, res)
  } catch (e) {
    console.error(e)
    if (!res.headersSent) res.writeHead(500).end(String(e))
  }
})
console.log(JSON.stringify({ issuer }))
