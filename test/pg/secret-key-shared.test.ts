/**
 * Two instances on one PostgreSQL (contract §15): the second, with a key of its own, refuses to serve and says why;
 * given the first one's key (SALTDECK_SECRET_KEY_FILE) both serve, and a secret stored through one is set on the other.
 */
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { freshPostgresUrl } from '../helpers/migrations'
import { WRONG_KEY } from '../../src/features/settings/key-check'

setDefaultTimeout(60_000)

const PW = 'shared-key-pw'
const running: Served[] = []
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop()
})

/** An admin session's cookie header on `url`. */
async function adminCookie(url: string): Promise<Record<string, string>> {
  const r = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PW }) })
  expect(r.status).toBe(200)
  const cookie = r.headers.get('set-cookie')!.split(';')[0]!
  return { cookie, origin: url }
}

test('a second instance with its own secret.key is refused; with the first one\'s key both serve the same secrets', async () => {
  const url = await freshPostgresUrl()
  const env = { SALTDECK_DATABASE_URL: url, SALTDECK_ADMIN_PASSWORD: PW, SALTDECK_ARGON2_MEMORY_KIB: '1024' }
  const dirA = mkdtempSync(join(tmpdir(), 'saltdeck-shared-a-'))
  const dirB = mkdtempSync(join(tmpdir(), 'saltdeck-shared-b-'))
  const a = await startServe(dirA, env)
  running.push(a)
  const refused = await startServe(dirB, env).then(() => null, (e: Error) => e.message)
  expect(refused).toContain(WRONG_KEY)
  const b = await startServe(dirB, { ...env, SALTDECK_SECRET_KEY_FILE: join(dirA, 'secret.key') })
  running.push(b)
  const put = await fetch(`${a.url}/api/admin/settings/salt`, {
    method: 'PUT', headers: { ...(await adminCookie(a.url)), 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://salt.example.invalid:8000', username: 'saltdeck', password: 'stored-through-a' }),
  })
  expect(put.status).toBe(200)
  const seen = (await (await fetch(`${b.url}/api/admin/settings`, { headers: await adminCookie(b.url) })).json()) as { salt: Record<string, unknown> }
  expect(seen.salt).toMatchObject({ url: 'https://salt.example.invalid:8000', password_set: true })
})
