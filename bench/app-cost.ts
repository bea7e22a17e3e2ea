#!/usr/bin/env bun
/**
 * One route's cost inside the process, without HTTP: the app's fetch handler called in a loop on a seeded fleet, the
 * mean wall and CPU µs per request printed, against any checkout (ROOT); under `bun --cpu-prof` it shows where a
 * route's time goes without wrk and the network stack. Two checkouts side by side: bench/app-pair.ts.
 *
 *   bun bench/app-cost.ts ROOT DATA_DIR '/api/activity?search=web' [REQUESTS]     # DATA_DIR: admin bench-admin-pw
 */
const [root, dir, path] = process.argv.slice(2) as [string, string, string]
const n = Number(process.argv[5] ?? 5000)
process.env.SALTDECK_ADMIN_PASSWORD = 'bench-admin-pw'
const { loadConfig } = await import(`${root}/src/config`)
const { openDataDir } = await import(`${root}/src/server`)
const { createApp } = await import(`${root}/src/app`)
const { nullLogger } = await import(`${root}/bench/harness`)
const deps = await openDataDir(loadConfig(process.env, { dataDir: dir, host: '127.0.0.1' }), nullLogger())
const app = createApp(deps)
const base = 'http://127.0.0.1:8000'
const login = await app.fetch(new Request(`${base}/api/auth/login`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-admin-pw' }),
}))
const cookie = login.headers.get('set-cookie')!.split(';')[0]!
const once = async () => {
  const r = await app.fetch(new Request(base + path, { headers: { cookie } }))
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  await r.text()
}
// A copy that has not built its search index yet builds it in a thread beside these requests: wait for it.
for (let t = 0; t < 600; t++) {
  const metrics = await (await app.fetch(new Request(`${base}/metrics`, { headers: { cookie } }))).text()
  const lag = /^saltdeck_search_index_pending_events (\d+)/m.exec(metrics)
  if (!lag || lag[1] === '0') break
  await Bun.sleep(1000)
}
// Warm: statements prepared, code compiled, kept totals made.
for (let i = 0; i < Math.min(2000, n); i++) await once()
// Wall time, and the process's CPU time (user + system), which a busy neighbour on a shared machine disturbs less.
const t0 = Bun.nanoseconds()
const c0 = process.cpuUsage()
for (let i = 0; i < n; i++) await once()
const c = process.cpuUsage(c0)
console.log(JSON.stringify({ path, us: (Bun.nanoseconds() - t0) / n / 1000, cpu_us: (c.user + c.system) / n }))
process.exit(0)
