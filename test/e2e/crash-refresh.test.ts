// Contract §17: an inventory refresh left open by a crash is closed as failed at the next start. A served Saltdeck
// starts a refresh whose pkg.list_pkgs call the (fake) salt-api holds open, is killed with SIGKILL mid-refresh, and
// after a restart on the same data directory reports the refresh failed and starts a new one (not 409 for ever).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { FakeSalt } from '../helpers/fake-salt'
import { until } from '../helpers/until'

const dir = mkdtempSync(join(tmpdir(), 'saltdeck-crash-'))
const salt = new FakeSalt().start().addMinions(['web-01', 'web-02'])
const env = {
  SALTDECK_ADMIN_PASSWORD: 'crash-admin-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024',
  SALTDECK_SALT_URL: salt.url, SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_SALT_PASSWORD: 's3cr3t', SALTDECK_SALT_EAUTH: 'sharedsecret',
}
let served: Served | null = null
afterAll(async () => {
  await served?.stop()
  salt.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** Starts the service on the test's data directory and returns a caller signed in as admin. */
async function start() {
  served = await startServe(join(dir, 'data'), env)
  const login = await fetch(`${served.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'crash-admin-pw' }) })
  const h = { 'content-type': 'application/json', authorization: `Bearer ${login.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}` }
  const url = served.url
  return async (method: string, path: string, body?: unknown) => {
    const r = await fetch(url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: r.status, body: (await r.json().catch(() => null)) as any }
  }
}

test('a refresh killed with SIGKILL mid-collection is closed as failed at the next start, and refresh works again', async () => {
  let api = await start()
  await api('POST', '/api/admin/pollers/keys/run')
  await until(async () => (await api('GET', '/api/minions?status=accepted')).body.total === 2 || null, 'two keys accepted', { ms: 10_000 })
  await api('POST', '/api/admin/pollers/presence/run')
  await until(async () => (await api('GET', '/api/minions?status=online')).body.total === 2 || null, 'two minions online', { ms: 10_000 })
  // pkg.list_pkgs never answers: the refresh is mid-collection when the process dies.
  salt.hold = 'pkg.list_pkgs'
  expect((await api('POST', '/api/inventory/refresh', {})).status).toBe(202)
  await until(() => salt.held >= 1 || null, 'pkg.list_pkgs asked', { ms: 10_000 })
  expect((await api('GET', '/api/inventory/status')).body.running).toBe(true)
  served!.proc.kill('SIGKILL')
  await served!.proc.exited
  salt.hold = null

  api = await start()
  const st = (await api('GET', '/api/inventory/status')).body
  expect(st.running).toBe(false)
  expect(st.current).toBeNull()
  expect(st.last).toMatchObject({ finished_at: expect.any(String), error: 'Saltdeck stopped before the refresh finished' })
  expect((await api('POST', '/api/inventory/refresh', {})).status).toBe(202)
  const done = await until(async () => {
    const s = (await api('GET', '/api/inventory/status')).body
    return !s.running && s.last.error === null ? s : null
  }, 'the new refresh finished', { ms: 15_000 })
  expect(done.last).toMatchObject({ minions_asked: 2, minions_answered: 2 })
}, 60_000)
