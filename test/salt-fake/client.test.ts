// Proves the salt-api client against the fake: login, token reuse, one re-login on 401, backoff on 5xx and network errors, timeouts, typed errors.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { FakeSalt } from '../helpers/fake-salt'
import { SaltClient, shortReason, type SaltCreds } from '../../src/salt/client'
import { SaltNotConfigured, SaltRejected, SaltUnavailable } from '../../src/salt/errors'
import { httpError } from '../../src/http/errors'

let salt: FakeSalt
let creds: SaltCreds
const sleeps: number[] = []
const client = (over: Partial<SaltCreds> = {}) => new SaltClient(() => ({ ...creds, ...over }), { sleep: async (ms) => void sleeps.push(ms), timeoutMs: 2000 })
beforeEach(() => {
  salt = new FakeSalt().start().addMinions(['web-01', 'web-02', 'db-01'])
  creds = { url: salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret', verify: true }
  sleeps.length = 0
})
afterEach(() => salt.stop())

test('logs in once and reuses the token', async () => {
  const c = client()
  expect(await c.local('*', 'test.ping')).toEqual({ 'web-01': true, 'web-02': true, 'db-01': true })
  expect(await c.runner('manage.present')).toEqual(['db-01', 'web-01', 'web-02'])
  expect(salt.sessions.size).toBe(1)
})
test('an expired session (HTML 401) triggers one re-login and the call succeeds', async () => {
  const c = client()
  await c.local('*', 'test.ping')
  salt.expireSessions()
  expect(await c.wheel('key.list_all')).toMatchObject({ minions: ['db-01', 'web-01', 'web-02'] })
  expect(salt.sessions.size).toBe(1)
})
test('5xx answers are retried with exponential backoff, then succeed', async () => {
  const c = client()
  await c.session()
  salt.fail500 = 2
  expect(await c.local('web-01', 'test.ping')).toEqual({ 'web-01': true })
  expect(sleeps).toEqual([500, 1000])
})
test('persistent 500 is a SaltRejected (502) after 3 attempts', async () => {
  const c = client()
  await c.session()
  salt.fail500 = 10
  const e = await c.local('*', 'test.ping').catch((x) => x)
  expect(e).toBeInstanceOf(SaltRejected)
  expect(httpError(e)?.status).toBe(502)
  expect(e.detail).toBe('Salt API error: An unexpected error occurred')
  expect(salt.fail500).toBe(7)
})
test('wrong credentials are a SaltRejected with the reason from the HTML page', async () => {
  const e = await client({ password: 'nope' }).login().catch((x) => x)
  expect(e).toBeInstanceOf(SaltRejected)
  expect(e.detail).toBe('Salt API error: Could not authenticate using provided credentials')
})
test('master down (503) is SaltUnavailable', async () => {
  salt.down = true
  const e = await client().login().catch((x) => x)
  expect(e).toBeInstanceOf(SaltUnavailable)
  expect(e.detail).toBe('Salt API unavailable')
  expect(httpError(e)?.status).toBe(503)
})
test('nothing listening is SaltUnavailable after retries', async () => {
  const port = salt.server.port
  salt.stop()
  const e = await client({ url: `http://127.0.0.1:${port}` }).login().catch((x) => x)
  expect(e).toBeInstanceOf(SaltUnavailable)
  expect(sleeps).toEqual([500, 1000])
})
test('a slow answer times out as SaltUnavailable', async () => {
  salt.delayMs = 500
  const c = new SaltClient(() => creds, { timeoutMs: 100, attempts: 1 })
  const e = await c.login().catch((x) => x)
  expect(e).toBeInstanceOf(SaltUnavailable)
  expect(e.reason).toBe('timed out')
})
test('missing settings are SaltNotConfigured', async () => {
  const e = await client({ url: null }).login().catch((x) => x)
  expect(e).toBeInstanceOf(SaltNotConfigured)
  expect(e.detail).toBe('Salt API not configured')
})
test('a failed wheel call is rejected with its message', async () => {
  // key.gen_accept is a wheel function the fake does not implement (it answers key.finger since the fingerprints).
  const e: any = await client().wheel("key.gen_accept", { id_: "x" }).catch((x) => x)
  expect(e).toBeInstanceOf(SaltRejected)
  expect(e.detail).toStartWith('Salt API error: Exception occurred in wheel key.gen_accept')
})
test('a disabled client is a 400 rejected with salt-api\'s sentence', async () => {
  const e: any = await client().run({ client: "ssh", fun: "test.ping" }).catch((x) => x)
  expect(e.detail).toBe("Salt API error: Client disabled: 'ssh'. Add to 'netapi_enable_clients' master config option to enable.")
})
test('local_async returns the jid as a string and the expected minions', async () => {
  const r = await client().localAsync('web-*', 'state.apply')
  expect(typeof r.jid).toBe('string')
  expect(r.jid).toMatch(/^\d{20}$/)
  expect(r.minions).toEqual(['web-01', 'web-02'])
})
test('events opens the SSE stream with the token header', async () => {
  const ac = new AbortController()
  const res = await client().events(ac.signal)
  expect(res.headers.get('content-type')).toContain('text/event-stream')
  const reader = res.body!.getReader()
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('retry: 400\n')
  ac.abort()
})
test('shortReason reads CherryPy pages and JSON errors and bounds them', () => {
  expect(shortReason(401, '<html><title>401 Unauthorized</title><p>No permission -- see authorization schemes</p></html>')).toBe('No permission -- see authorization schemes')
  expect(shortReason(500, '{"status": 500, "return": "An unexpected error occurred"}')).toBe('An unexpected error occurred')
  expect(shortReason(502, '')).toBe('HTTP 502')
  expect(shortReason(400, `<p>${'x'.repeat(500)}</p>`).length).toBe(201)
})
