// Proves `serve` on a real data dir: port 0, 0700 dir, settings survive a SIGTERM stop and a second start, one serve per
// data directory and port, and revocation by the CLI reaching open activity streams.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import { spawn } from 'bun'
import { databaseEnv, startServe } from '../helpers/serve'
import { TEST_ENGINE } from '../helpers/migrations'

const root = mkdtempSync(join(tmpdir(), 'saltdeck-serve-'))
const dataDir = join(root, 'data')
afterAll(() => rmSync(root, { recursive: true, force: true }))

async function loginCookie(url: string) {
  const r = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'serve-test-pw' }) })
  expect(r.status).toBe(200)
  return r.headers.get('set-cookie')!.split(';')[0]!
}

test('settings written by one run are read back by the next', async () => {
  const env = { SALTDECK_ADMIN_PASSWORD: 'serve-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' }
  const first = await startServe(dataDir, env)
  expect(statSync(dataDir).mode & 0o777).toBe(0o700)
  // Every file of the data directory is the operator's alone (issue 9 item 11), the WAL and the search index too.
  for (const f of readdirSync(dataDir)) expect([f, statSync(join(dataDir, f)).mode & 0o777]).toEqual([f, 0o600])
  expect(await (await fetch(`${first.url}/healthz`)).json()).toEqual({ status: 'ok' })
  expect((await fetch(`${first.url}/readyz`)).status).toBe(200)
  const cookie = await loginCookie(first.url)
  const put = await fetch(`${first.url}/api/admin/settings/pollers`, {
    method: 'PUT', headers: { 'content-type': 'application/json', cookie, origin: first.url }, body: JSON.stringify({ jobs_poll_interval_seconds: 45, event_stream_enabled: true }),
  })
  expect(put.status).toBe(200)
  const salt = await fetch(`${first.url}/api/admin/settings/salt`, {
    method: 'PUT', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ url: 'http://127.0.0.1:8000', password: 'kept-secret' }),
  })
  expect(salt.status).toBe(200)
  expect(await first.stop()).toBe(0)
  expect(first.output()).toContain('saltdeck stopped')

  const second = await startServe(dataDir, env)
  const cookie2 = await loginCookie(second.url)
  const s: any = await (await fetch(`${second.url}/api/admin/settings`, { headers: { cookie: cookie2 } })).json()
  expect(s.pollers.jobs_poll_interval_seconds).toBe(45)
  expect(s.pollers.event_stream_enabled).toBe(true)
  expect(s.salt).toMatchObject({ url: 'http://127.0.0.1:8000', password_set: true })
  // The audit log names the client's address as the server saw it (read only when an entry is written).
  const audit: any = await (await fetch(`${second.url}/api/audit?action=auth.login`, { headers: { cookie: cookie2 } })).json()
  expect(audit.entries[0]).toMatchObject({ action: 'auth.login', client: '127.0.0.1' })
  expect(await second.stop()).toBe(0)
  expect(second.output()).not.toContain('kept-secret')
})

test('a body over 1 MiB on the real server gets the JSON 413', async () => {
  const srv = await startServe(join(root, 'big'), { SALTDECK_ADMIN_PASSWORD: 'serve-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' })
  try {
    // Raw HTTP/1.1 over TCP: the clients in bun's runtime stall on an early answer to an unread upload.
    const body = JSON.stringify({ username: 'a'.repeat(1_100_000), password: 'x' })
    const { hostname, port } = new URL(srv.url)
    const raw = await new Promise<string>((resolve, reject) => {
      let got = ''
      const sock = connect({ host: hostname, port: Number(port) }, () => {
        sock.write(`POST /api/auth/login HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`)
        sock.write(body)
      })
      sock.on('data', (c) => {
        got += c
        if (got.includes('}')) {
          sock.destroy()
          resolve(got)
        }
      })
      sock.on('error', (e) => (got ? resolve(got) : reject(e)))
    })
    const r = { status: Number(raw.split(' ')[1]), text: raw.slice(raw.indexOf('\r\n\r\n') + 4) }
    expect(r.status).toBe(413)
    expect(JSON.parse(r.text)).toEqual({ detail: 'Request body too large' })
  } finally {
    await srv.stop()
  }
})

/** Runs `bun run src/main.ts ARGS` to its end; exit code and everything it printed. */
async function runSaltdeck(args: string[], env: Record<string, string>) {
  const p = spawn(['bun', 'run', 'src/main.ts', ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { code, text: out + err }
}

// The serve lock is SQLite's (a lock on the data directory's file); on PostgreSQL several serves share one database.
test.skipIf(TEST_ENGINE === 'postgres')('a second serve on the same data directory refuses to start and names the holder; after kill -9 of the holder a new one starts', async () => {
  const dir = join(root, 'locked')
  const env = { SALTDECK_ADMIN_PASSWORD: 'serve-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' }
  const first = await startServe(dir, env)
  try {
    const second = await runSaltdeck(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], env)
    expect(second.code).not.toBe(0)
    expect(second.text).toContain(`in use by another saltdeck serve (pid ${first.proc.pid})`)
    expect(second.text).not.toContain('saltdeck listening')
    // The operator commands still work beside the running service.
    expect(await runSaltdeck(['user', 'list', '--data-dir', dir], env)).toMatchObject({ code: 0, text: expect.stringContaining('admin') })
    expect((await runSaltdeck(['backup', join(root, 'locked-backup.db'), '--data-dir', dir], env)).code).toBe(0)
    expect(await (await fetch(`${first.url}/healthz`)).json()).toEqual({ status: 'ok' })
  } finally {
    first.proc.kill('SIGKILL')
    await first.proc.exited
  }
  // The lock went with the killed process; its stale pid file does not block.
  const third = await startServe(dir, env)
  expect(await (await fetch(`${third.url}/healthz`)).json()).toEqual({ status: 'ok' })
  expect(await third.stop()).toBe(0)
}, 60_000)

test('a second process on the same port fails to start: the port is never shared', async () => {
  const env = { SALTDECK_ADMIN_PASSWORD: 'serve-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' }
  const first = await startServe(join(root, 'port-a'), env)
  try {
    const port = new URL(first.url).port
    const second = await runSaltdeck(['serve', '--host', '127.0.0.1', '--port', port, '--data-dir', join(root, 'port-b')], env)
    expect(second.code).not.toBe(0)
    expect(second.text).toContain('in use')
  } finally {
    await first.stop()
  }
}, 60_000)

test('on a real service, saltdeck user reset-password from another process ends the open activity streams of that user within 5 s', async () => {
  const dir = join(root, 'streams')
  // The CLI reaches the service's database: on PostgreSQL, the one the served data directory got.
  const env = { SALTDECK_ADMIN_PASSWORD: 'serve-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024', ...(await databaseEnv(dir, {})) }
  const srv = await startServe(dir, env)
  try {
    const cookie = await loginCookie(srv.url)
    const res = await fetch(`${srv.url}/api/activity/stream`, { headers: { cookie } })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return performance.now()
    })()
    // Timed from before the command starts: an upper bound on the time from the revocation to the stream's end.
    const t0 = performance.now()
    const reset = spawn(['bun', 'run', 'src/main.ts', 'user', 'reset-password', 'admin', '--password-stdin', '--data-dir', dir], { env: { ...process.env, ...env }, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
    reset.stdin.write('another-admin-pw\n')
    reset.stdin.end()
    expect(await reset.exited).toBe(0)
    const at = await Promise.race([ended, Bun.sleep(5000).then(() => null)])
    if (at === null) await reader.cancel()
    expect(at).not.toBeNull()
    expect(at! - t0).toBeLessThan(5000)
  } finally {
    await srv.stop()
  }
}, 60_000)
