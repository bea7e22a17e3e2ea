// Proves `saltdeck demo` (issue 23 item 8): a real process seeds a temporary data directory without salt, serves the
// overview's figures non-zero with the login it printed, and removes the directory when it is stopped.
import { expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { spawn } from 'bun'

test('saltdeck demo serves a seeded fleet with the login it prints and removes its data directory on SIGTERM', async () => {
  const proc = spawn(['bun', 'run', 'src/main.ts', 'demo', '--host', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, SALTDECK_ARGON2_MEMORY_KIB: '1024' }, stdout: 'pipe', stderr: 'pipe',
  })
  let out = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const c of proc.stdout as ReadableStream<Uint8Array>) out += decoder.decode(c)
  })()
  void (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) out += decoder.decode(c)
  })()
  // Seeding a few hundred minions takes ~10 s on a quiet machine; other work shares the two cores.
  const deadline = Date.now() + 90_000
  while (!/data {3}\S+/.test(out) && proc.exitCode === null && Date.now() < deadline) await Bun.sleep(100)
  const url = /open {3}(http:\/\/\S+?)\/?\s/.exec(out)?.[1]
  const password = /login {2}admin \/ (\S+)/.exec(out)?.[1]
  const dataDir = /data {3}(\S+)/.exec(out)?.[1]
  expect([url, password, dataDir].every(Boolean), out).toBe(true)
  expect(existsSync(dataDir!)).toBe(true)
  try {
    const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) })
    expect(login.status).toBe(200)
    // Ready to look at: no password change asked first.
    expect(((await login.json()) as { must_change_pw: boolean }).must_change_pw).toBe(false)
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!
    const get = async (path: string) => {
      const r = await fetch(url + path, { headers: { cookie } })
      expect([path, r.status]).toEqual([path, 200])
      return (await r.json()) as any
    }
    // The overview's figures: minions by presence and last run, firing alerts, activity, compliance.
    const minions = await get('/api/minions?limit=1')
    expect(minions.total).toBeGreaterThanOrEqual(200)
    expect((await get('/api/minions?status=online&limit=1')).total).toBeGreaterThan(0)
    expect((await get('/api/minions?status=offline&limit=1')).total).toBeGreaterThan(0)
    expect((await get('/api/minions?status=unhealthy&limit=1')).total).toBeGreaterThan(0)
    expect((await get('/api/minions?status=changed&limit=1')).total).toBeGreaterThan(0)
    expect((await get('/api/alerts?state=firing&limit=1')).total).toBeGreaterThan(0)
    expect((await get('/api/activity?limit=1')).total).toBeGreaterThan(0)
    const summary = await get('/api/runs/summary')
    expect(summary.by_status.unhealthy).toBeGreaterThan(0)
    expect(summary.by_status.healthy).toBeGreaterThan(0)
    expect((await get('/api/jobs?limit=1')).total).toBeGreaterThan(0)
    expect((await get('/api/inventory/packages?limit=1')).total).toBeGreaterThan(0)
    const vulns = await get('/api/vulns?limit=50')
    expect(vulns.vulns.length).toBeGreaterThan(0)
    expect(vulns.vulns.some((v: { severity: string; minion_count: number }) => v.severity === 'critical' && v.minion_count > 0)).toBe(true)
    // A failing minion's last run has a failing state with its comment.
    const failing = (await get('/api/minions?status=unhealthy&limit=1')).minions[0].id
    const runs = await get(`/api/minions/${failing}/runs?limit=1`)
    const detail = await get(`/api/minions/${failing}/runs/${runs.runs[0].jid}`)
    expect(JSON.stringify(detail)).toContain('"result":false')
    // The overview page itself.
    expect((await fetch(`${url}/`)).status).toBe(200)
  } finally {
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  }
  expect(existsSync(dataDir!)).toBe(false)
}, 120_000)
