/**
 * Event-ingest benchmark (issue 3): `saltdeck serve` consumes /events from bench/sse-source.ts into SQLite.
 * Samples the stored-event count, the server's RSS and the search index's backlog every 5 s, and asks /healthz every
 * 200 ms (its slowest answer per window). Run: bun bench/ingest.ts [seconds]
 * On PostgreSQL: SALTDECK_DATABASE_URL=postgres://…/emptydb bun bench/ingest.ts [seconds]
 * Into a seeded fleet: bun bench/ingest.ts [seconds] --data-dir COPY (a copy of a bench/seed.ts data dir, which the
 * run grows; with SALTDECK_DATABASE_URL a copy of its PostgreSQL database, e.g. `createdb -T fleet5000 ing1`): the
 * admin password comes from its bench-info.json and every poller but the event stream is turned off, as load.ts does.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseFlags } from '../src/cli'
import { startServe } from '../test/helpers/serve'
import { cpuSeconds, spawnAnnounced } from './harness'

const seconds = Number(process.argv[2] ?? 60)
const F = parseFlags(process.argv.slice(3), [])
const FLEET = F['data-dir'] ? resolve(F['data-dir']) : null
const dir = mkdtempSync(join(tmpdir(), 'sd-ingest-'))
const dataDir = FLEET ?? join(dir, 'data')
const PASSWORD: string = FLEET ? JSON.parse(readFileSync(join(FLEET, 'bench-info.json'), 'utf8')).admin_password ?? 'bench-admin-pw' : 'bench-password'


const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
const src = await spawnAnnounced<{ url: string }>(['bun', 'bench/sse-source.ts', '0'])
const source = { proc: src.proc, url: src.info.url }
const srv = await startServe(dataDir, {
  SALTDECK_ADMIN_PASSWORD: PASSWORD, SALTDECK_SALT_URL: source.url, SALTDECK_SALT_USERNAME: 'bench', SALTDECK_SALT_PASSWORD: 'x', SALTDECK_SALT_EAUTH: 'sharedsecret',
  ...(process.env.SALTDECK_DATABASE_URL ? { SALTDECK_DATABASE_URL: process.env.SALTDECK_DATABASE_URL } : {}),
})
const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
const auth = { authorization: `Bearer ${login.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}`, 'content-type': 'application/json' }
const off = {
  minion_state_keys_interval_seconds: 0, minion_state_presence_interval_seconds: 0, minion_state_grains_interval_seconds: 0,
  // A seeded fleet has minions: its fleet and jobs polls and the inventory refresh would ask the stand-in (and an inventory
  // refresh measure itself), so they go off as in load.ts.
  ...(FLEET ? { fleet_poll_interval_seconds: 0, jobs_poll_interval_seconds: 0, inventory_refresh_minutes: 0 } : {}),
}
await fetch(`${srv.url}/api/admin/settings/pollers`, { method: 'PUT', headers: auth, body: JSON.stringify({ ...off, event_stream_enabled: true }) })
const total = async () => ((await (await fetch(`${srv.url}/api/activity?limit=1`, { headers: auth })).json()) as { total: number }).total
/** Events stored but not yet in the search index (the indexer worker's backlog). */
const pending = async () => Number(/^saltdeck_search_index_pending_events (\d+)/m.exec(await (await fetch(`${srv.url}/metrics`, { headers: auth })).text())?.[1])

const samples: { t: number; events: number; perS: number; rssMb: number; searchPending: number; healthzMaxMs: number }[] = []
// /healthz asked every 200 ms throughout: the slowest answer of each window says whether the service stays responsive.
let healthzMax = 0
const healthzAll: number[] = []
let probing = true
const probe = (async () => {
  while (probing) {
    const t = performance.now()
    await fetch(`${srv.url}/healthz`)
    const ms = performance.now() - t
    healthzAll.push(ms)
    healthzMax = Math.max(healthzMax, ms)
    await Bun.sleep(200)
  }
})()
const t0 = performance.now()
const cpu0 = { server: cpuSeconds(srv.proc.pid), source: cpuSeconds(source.proc.pid) }
let prev = await total()
// Each window's rate uses the time between the two answers, not the 5 s asked for: a service slow to answer would
// otherwise be credited with a longer window's events.
let prevAt = performance.now()
for (let i = 0; i < seconds / 5; i++) {
  await Bun.sleep(5000)
  const n = await total()
  const at = performance.now()
  samples.push({ t: Math.round((at - t0) / 1000), events: n - prev, perS: Math.round(((n - prev) * 1000) / (at - prevAt)), rssMb: Math.round(rss(srv.proc.pid)), searchPending: await pending(), healthzMaxMs: +healthzMax.toFixed(1) })
  healthzMax = 0
  prev = n
  prevAt = performance.now()
}
probing = false
await probe
const wall = (performance.now() - t0) / 1000
// Cores busy on average: the service (main thread plus its workers) and the SSE source share the machine's cores.
const cores = { server: (cpuSeconds(srv.proc.pid) - cpu0.server) / wall, source: (cpuSeconds(source.proc.pid) - cpu0.source) / wall }
await srv.stop()
source.proc.kill()
const rates = samples.map((s) => s.perS).sort((a, b) => a - b)
console.log(JSON.stringify({ seconds, fleet: FLEET, engine: process.env.SALTDECK_DATABASE_URL ? 'postgres' : 'sqlite', load1_end: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]), samples, median_events_per_s: Math.round(rates[Math.floor(rates.length / 2)]!), min_events_per_s: Math.round(rates[0]!), rss_mb: samples.map((s) => s.rssMb), search_pending: samples.map((s) => s.searchPending), healthz_ms: { probes: healthzAll.length, max: +Math.max(...healthzAll).toFixed(1), p99: +[...healthzAll].sort((a, b) => a - b)[Math.floor(healthzAll.length * 0.99)]!.toFixed(1), per_window_max: samples.map((s) => s.healthzMaxMs) }, cores_busy: { server: +cores.server.toFixed(2), source: +cores.source.toFixed(2) } }, null, 1))
rmSync(dir, { recursive: true, force: true })
