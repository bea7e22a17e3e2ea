// `serve --tls-cert --tls-key` answers HTTPS and marks the session cookie Secure; a half pair is refused.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe } from '../helpers/serve'

const root = mkdtempSync(join(tmpdir(), 'saltdeck-tls-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const cert = join(root, 'cert.pem')
const key = join(root, 'key.pem')
const env = { SALTDECK_ADMIN_PASSWORD: 'tls-test-pw-1', SALTDECK_ARGON2_MEMORY_KIB: '1024' }

test('HTTPS with a self-signed pair', async () => {
  const gen = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', key, '-out', cert])
  expect(gen.exitCode).toBe(0)
  const s = await startServe(join(root, 'data'), env, undefined, { args: ['--tls-cert', cert, '--tls-key', key] })
  try {
    expect(s.url).toStartWith('https://')
    const tls = { rejectUnauthorized: false }
    expect(await (await fetch(`${s.url}/healthz`, { tls })).json()).toEqual({ status: 'ok' })
    const r = await fetch(`${s.url}/api/auth/login`, { tls, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'tls-test-pw-1' }) })
    expect(r.status).toBe(200)
    expect(r.headers.get('set-cookie')).toMatch(/;\s*Secure/i)
    await expect(fetch(`${s.url.replace('https:', 'http:')}/healthz`)).rejects.toThrow()
  } finally {
    expect(await s.stop()).toBe(0)
  }
}, 30_000)

test('a certificate without its key is refused at start', () => {
  const p = Bun.spawnSync(['bun', 'run', 'src/main.ts', 'serve', '--port', '0', '--data-dir', join(root, 'data2'), '--tls-cert', cert], { env: { ...process.env, ...env } })
  expect(p.exitCode).toBe(2)
  expect(p.stderr.toString()).toContain('--tls-cert and --tls-key go together')
})
