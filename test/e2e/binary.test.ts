// Smoke test of the release executable: built by build.ts, started in an empty directory, used, stopped and restarted.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { databaseEnv, startServe, type Served } from '../helpers/serve'
import { TEST_ENGINE } from '../helpers/migrations'
import { FakeSalt } from '../helpers/fake-salt'
import { until } from '../helpers/until'

// Each operator command starts the compiled binary (a second or more under load); bun's 5 s default cut the
// several-command tests short on a loaded machine and the served process with them.
setDefaultTimeout(60_000)

const root = mkdtempSync(join(tmpdir(), 'saltdeck-bin-'))
const bin = join(root, 'saltdeck')
const work = join(root, 'empty')
const dataDir = join(work, 'data')
const env = { SALTDECK_ARGON2_MEMORY_KIB: '1024' }
const NEW_PW = 'binary-smoke-pw-1'

/** The served data directory's database (PostgreSQL: its URL; nothing on SQLite), which operator commands reach too. */
let dbEnv: Record<string, string> = {}

/** Runs the binary to completion with stdin text (and `db`, the database environment); returns exit code and output. */
function run(args: string[], stdin = '', db = dbEnv) {
  const p = Bun.spawnSync([bin, ...args], { cwd: work, env: { ...process.env, ...env, ...db }, stdin: new TextEncoder().encode(stdin) })
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() }
}

async function login(url: string, password: string, init: RequestInit = {}) {
  const r = await fetch(`${url}/api/auth/login`, { ...init, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) })
  return { status: r.status, cookie: r.headers.get('set-cookie') ?? '', body: (await r.json()) as { must_change_pw: boolean } }
}

beforeAll(async () => {
  const b = Bun.spawnSync(['bun', 'build.ts', bin], { cwd: join(import.meta.dir, '..', '..') })
  if (b.exitCode !== 0) throw new Error(`build failed:\n${b.stdout}\n${b.stderr}`)
  Bun.spawnSync(['mkdir', '-p', work])
  dbEnv = await databaseEnv(dataDir, {})
}, 120_000)
afterAll(() => rmSync(root, { recursive: true, force: true }))

test('version and help', () => {
  expect(run(['version'])).toMatchObject({ code: 0, out: '0.1.0\n' })
  const help = run(['--help'])
  expect(help.code).toBe(0)
  for (const c of ['serve', 'user create', 'user reset-password', 'user list', 'backup']) expect(help.out).toContain(`saltdeck ${c}`)
  expect(run(['frobnicate']).code).toBe(2)
  expect(run(['user', 'list'], '', {}).err).toContain('no database')
})

let served: Served
test('serves the API and the dashboard from an empty directory', async () => {
  served = await startServe(dataDir, env, [bin], { cwd: work })
  const { url } = served
  expect(statSync(dataDir).mode & 0o777).toBe(0o700)
  expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' })

  const initial = readFileSync(join(dataDir, 'initial-admin-password'), 'utf8').trim()
  const first = await login(url, initial)
  expect(first.status).toBe(200)
  expect(first.body.must_change_pw).toBe(true)
  const cookie = first.cookie.split(';')[0]!
  const change = await fetch(`${url}/api/auth/change-password`, {
    method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ current_password: initial, new_password: NEW_PW }),
  })
  expect(change.status).toBe(204)
  const again = await login(url, NEW_PW)
  expect(again.body.must_change_pw).toBe(false)
  const c2 = again.cookie.split(';')[0]!
  const put = await fetch(`${url}/api/admin/settings/widget`, { method: 'PUT', headers: { 'content-type': 'application/json', cookie: c2 }, body: JSON.stringify({ widget_event_count: 17 }) })
  expect(put.status).toBe(200)
  // The log format switches for the very next line, without a restart.
  const fmt = await fetch(`${url}/api/admin/settings/logging`, { method: 'PUT', headers: { 'content-type': 'application/json', cookie: c2 }, body: JSON.stringify({ log_format: 'text' }) })
  expect(fmt.status).toBe(200)
  await fetch(`${url}/readyz`)
  // The line reaches the pipe a moment after the answer.
  await until(() => /Z INFO request method="GET" path="\/readyz" status=200/.test(served.output()), 'the text log line')

  const html = await fetch(`${url}/`)
  expect(html.headers.get('content-type')).toStartWith('text/html')
  expect(html.headers.get('content-security-policy')).toContain("script-src 'self'")
  const page = await html.text()
  expect(page).toContain('<script type="module" src="/assets/app.js">')
  const js = await fetch(`${url}/assets/app.js`, { headers: { 'accept-encoding': 'gzip' } })
  expect(js.status).toBe(200)
  expect(js.headers.get('content-type')).toStartWith('text/javascript')
  expect((await js.text()).length).toBeGreaterThan(5000)
  const css = await fetch(`${url}/assets/app.css`)
  expect(css.headers.get('content-type')).toStartWith('text/css')
  expect(await css.text()).toContain('.shell')
}, 30_000)

test('operator commands run against the live data dir', async () => {
  const created = run(['user', 'create', 'alice', '--roles', 'operator', '--data-dir', dataDir])
  expect(created.code).toBe(0)
  const pw = /password: (\S+)/.exec(created.out)![1]!
  const r = await fetch(`${served.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: pw }) })
  expect(((await r.json()) as { must_change_pw: boolean }).must_change_pw).toBe(true)
  expect(run(['user', 'create', 'alice', '--data-dir', dataDir])).toMatchObject({ code: 1, err: expect.stringContaining('already exists') })
  expect(run(['user', 'reset-password', 'alice', '--password-stdin', '--data-dir', dataDir], 'alice-new-pass\n').code).toBe(0)
  const list = run(['user', 'list', '--data-dir', dataDir])
  expect(list.out).toMatch(/alice\s+active\s+-\s+operator/)
  const copy = join(root, 'backup.db')
  // On PostgreSQL the backup is pg_dump's (contract §15): saltdeck backup says so and copies nothing.
  if (TEST_ENGINE === 'postgres') {
    expect(run(['backup', copy, '--data-dir', dataDir])).toMatchObject({ code: 1, err: expect.stringContaining('pg_dump') })
    expect(existsSync(copy)).toBe(false)
    return
  }
  expect(run(['backup', copy, '--data-dir', dataDir]).code).toBe(0)
  expect(statSync(copy).mode & 0o777).toBe(0o600)
  const db = new (await import('bun:sqlite')).Database(copy, { readonly: true })
  expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM users').get()!.n).toBe(2)
  expect(Object.values(db.query('PRAGMA integrity_check').get() as object)).toEqual(['ok'])
  db.close()
  expect(run(['backup', copy, '--data-dir', dataDir]).code).toBe(1)
})

test('the inventory reader, the event stream reader and the search indexer run on their worker threads inside the binary', async () => {
  // Each worker is a bundle entrypoint of its own; if the binary lacked one, its work would fall back to the main
  // thread and log "... worker did not start".
  const salt = new FakeSalt().start().addMinions(['web-01', 'web-02'])
  try {
    const cookie = (await login(served.url, NEW_PW)).cookie.split(';')[0]!
    const h = { 'content-type': 'application/json', cookie }
    expect((await fetch(`${served.url}/api/admin/settings/salt`, { method: 'PUT', headers: h, body: JSON.stringify({ url: salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret' }) })).status).toBe(200)
    const poll = async (name: string) => {
      expect((await fetch(`${served.url}/api/admin/pollers/${name}/run`, { method: 'POST', headers: h, body: '{}' })).status).toBe(202)
      await until(async () => !((await (await fetch(`${served.url}/api/admin/pollers`, { headers: h })).json()) as any).pollers.find((p: any) => p.name === name).running)
    }
    await poll('keys')
    await poll('presence')
    expect((await fetch(`${served.url}/api/inventory/refresh`, { method: 'POST', headers: h, body: '{}' })).status).toBe(202)
    const last = await until(async () => ((await (await fetch(`${served.url}/api/inventory/status`, { headers: h })).json()) as any).last)
    expect(last).toMatchObject({ minions_asked: 2, minions_answered: 2, packages_stored: 6, error: null })
    // The event stream (on by default, started by the salt settings above): an event published by salt reaches the
    // activity feed, then a search finds it through the index. Published again until seen: a stream being replaced
    // by the settings change may still be open on salt's side. Starts of one minion within 10 s are one event.
    const metric = async () => Number(/^saltdeck_search_index_pending_events (\d+)/m.exec(await (await fetch(`${served.url}/metrics`, { headers: h })).text())?.[1])
    await until(async () => {
      salt.publish('salt/minion/web-02/start', { id: 'web-02' })
      return ((await (await fetch(`${served.url}/api/activity?event_type=minion.start`, { headers: h })).json()) as any).total === 1 || null
    }, 'the start event through the stream', { ms: 10_000, every: 200 })
    await until(async () => (await metric()) === 0 || null)
    expect(((await (await fetch(`${served.url}/api/activity?search=web-02%20started`, { headers: h })).json()) as any).total).toBe(1)
    expect(served.output()).not.toContain('worker did not start')
    expect(served.output()).not.toContain('worker failed')
  } finally {
    salt.stop()
  }
}, 30_000)

test('SIGTERM finishes an in-flight request, exits 0, and a restart keeps the data', async () => {
  // A salt-api that answers slowly keeps a test-salt-saved request in flight while the stop begins.
  const salt = new FakeSalt().start()
  salt.delayMs = 1200
  try {
    const cookie = (await login(served.url, NEW_PW)).cookie.split(';')[0]!
    const put = await fetch(`${served.url}/api/admin/settings/salt`, { method: 'PUT', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ url: salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret' }) })
    expect(put.status).toBe(200)
    // An open activity stream never ends by itself: the stop must end it rather than wait the drain timeout out.
    const stream = await fetch(`${served.url}/api/activity/stream`, { headers: { cookie } })
    const reader = stream.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('retry:')
    const inflight = fetch(`${served.url}/api/admin/settings/test-salt-saved`, { method: 'POST', headers: { 'content-type': 'application/json', cookie } })
    await Bun.sleep(300)
    const t0 = Date.now()
    const exited = served.stop()
    const res = await inflight
    expect(res.status).toBe(200)
    expect(await exited).toBe(0)
    expect(Date.now() - t0).toBeLessThan(8000)
    for (;;) if ((await reader.read()).done) break
  } finally {
    salt.stop()
  }
  expect(served.output()).toContain('saltdeck stopped')
  expect(existsSync(join(dataDir, 'saltdeck.db-wal')) ? statSync(join(dataDir, 'saltdeck.db-wal')).size : 0).toBe(0)

  const second = await startServe(dataDir, env, [bin], { cwd: work })
  try {
    const again = await login(second.url, NEW_PW)
    expect(again.status).toBe(200)
    const s = (await (await fetch(`${second.url}/api/admin/settings`, { headers: { cookie: again.cookie.split(';')[0]! } })).json()) as { widget: { widget_event_count: number } }
    expect(s.widget.widget_event_count).toBe(17)
  } finally {
    expect(await second.stop()).toBe(0)
  }
}, 30_000)
