// Proves what a hostile body gets from the served process itself (issue 9): nesting 100,000 deep is a JSON 422, never
// Bun's development error page; a body past 1 MiB, declared or chunked, is our JSON 413 and logged; the idle timeout is
// set on purpose with the activity stream's keepalives well inside it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { IDLE_TIMEOUT_S } from '../../src/server'
import { KEEPALIVE_MS } from '../../src/features/activity/stream'

const root = mkdtempSync(join(tmpdir(), 'saltdeck-hostile-'))
let s: Served
beforeAll(async () => (s = await startServe(join(root, 'data'), { SALTDECK_ADMIN_PASSWORD: 'hostile-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' })), 20_000)
// A graceful stop waits up to 10 s for connections whose refused body was never read to the end.
afterAll(async () => {
  await s.stop()
  rmSync(root, { recursive: true, force: true })
}, 20_000)

const post = (path: string, body: string | Uint8Array | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })

test.each([
  ['closed', '['.repeat(100_000) + ']'.repeat(100_000), 256],
  ['unterminated', '['.repeat(100_000), 256],
  ['objects', '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000), 256 * 5],
] as const)(
  'JSON nested 100,000 deep (%s) is a quick JSON 422 json_invalid on the public login route',
  async (_label, body, at) => {
    const t0 = performance.now()
    const r = await post('/api/auth/login', body)
    expect(r.status).toBe(422)
    expect(r.headers.get('content-type')).toContain('application/json')
    const j: any = await r.json()
    expect(j.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', at], ctx: { error: 'Nesting deeper than 256 levels at' } })
    expect(performance.now() - t0).toBeLessThan(1000)
  },
)

test('a 3 MiB body is our JSON 413, declared or chunked, and the request is logged', async () => {
  const big = new Uint8Array(3 * 1024 * 1024).fill(32)
  const declared = await post('/api/auth/login', big)
  expect(declared.status).toBe(413)
  expect(await declared.json()).toEqual({ detail: 'Request body too large' })
  const chunked = await post('/api/auth/login', new ReadableStream({ start(c) { for (let i = 0; i < 3; i++) c.enqueue(new Uint8Array(1024 * 1024).fill(32)); c.close() } }))
  expect(chunked.status).toBe(413)
  expect(await chunked.json()).toEqual({ detail: 'Request body too large' })
  await Bun.sleep(50)
  expect(s.output()).toMatch(/"status":413/)
})

test('the idle timeout is set on purpose and the activity keepalives come well inside it', () => {
  expect(IDLE_TIMEOUT_S).toBeGreaterThan(10)
  expect(KEEPALIVE_MS * 2).toBeLessThanOrEqual(IDLE_TIMEOUT_S * 1000)
})
