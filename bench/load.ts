#!/usr/bin/env bun
/**
 * Loopback HTTP load on the read paths of a seeded data directory, with wrk.
 *
 *   bun bench/load.ts --data-dir bench/data/fleet [--rounds 3] [--duration 10] [--threads 1] [--conns 16]
 *                     [--runs-conns 16] [--only name,name] [--ingest 1000] [--out bench/data/load-results.json]
 *                     [--database-url postgres://…]
 *
 * With --ingest N the server also consumes N job events a second from bench/sse-source.ts (its salt-api stand-in)
 * for the whole run, so caches of the read paths are exercised as in production; the report gives the events stored
 * and the search index's backlog at the end.
 *
 * Starts `bun run src/main.ts serve --data-dir DIR --port <free>` as a separate process, logs in as the seeded
 * admin (password from DIR/bench-info.json, else SALTDECK_ADMIN_PASSWORD, else "bench-admin-pw"), checks every
 * endpoint answers 200, then runs wrk --latency against each endpoint. Rounds are interleaved (round 1 of every
 * endpoint, then round 2, ...) so a noisy neighbour hits all endpoints alike; each endpoint gets one untimed
 * warm-up run first. The server's VmRSS (plus RssAnon/RssFile and VmHWM) is sampled every 250 ms from
 * /proc/<pid>/status. Prints a table of medians (with the raw figures) and writes everything as JSON.
 *
 * With --database-url the server serves that PostgreSQL database (a copy of DIR made with `saltdeck migrate-to-postgres`);
 * DIR still gives secret.key, bench-info.json (the admin password, the fleet's size) and minion-ids.txt.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync, openSync } from 'node:fs'
import { join, resolve, dirname } from 'node:path'
import { parseFlags } from '../src/cli'
import { cpuSeconds, freePort, spawnAnnounced, wrkMs } from './harness'

const F = parseFlags(process.argv.slice(2), [])
const DATA_DIR = resolve(F['data-dir'] ?? 'bench/data/fleet')
const ROUNDS = Number(F.rounds ?? 3)
const DURATION = Number(F.duration ?? 10)
const THREADS = Number(F.threads ?? 1)
const CONNS = Number(F.conns ?? 16)
const RUNS_CONNS = (F['runs-conns'] ?? String(CONNS)).split(',').map(Number)
const INGEST = Number(F.ingest ?? 0)
const ONLY = F.only ? new Set(F.only.split(',')) : null
const DATABASE_URL: string | undefined = F['database-url']
const ENGINE = DATABASE_URL ? 'postgres' : 'sqlite'
const OUT = resolve(F.out ?? join(dirname(DATA_DIR), `load-results-${new Date().toISOString().replace(/[:.]/g, '-')}.json`))
const ROOT = resolve(import.meta.dir, '..')

if (!existsSync(join(DATA_DIR, 'saltdeck.db'))) throw new Error(`no saltdeck.db in ${DATA_DIR}: run bench/seed.ts first`)
const info = existsSync(join(DATA_DIR, 'bench-info.json')) ? JSON.parse(readFileSync(join(DATA_DIR, 'bench-info.json'), 'utf8')) : {}
const PASSWORD: string = info.admin_password ?? process.env.SALTDECK_ADMIN_PASSWORD ?? 'bench-admin-pw'
const IDS_FILE = join(DATA_DIR, 'minion-ids.txt')
const which = Bun.which('wrk')
if (!which) throw new Error('wrk not found: apt-get install -y wrk')

// ---------------------------------------------------------------------------------------------------------------
// The server

const port = freePort()
const base = `http://127.0.0.1:${port}`
const logPath = join(dirname(DATA_DIR), 'server.log')
const logFd = openSync(logPath, 'a')
// The salt-api stand-in sending INGEST events a second.
const source = INGEST > 0 ? await spawnAnnounced<{ url: string }>(['bun', 'bench/sse-source.ts', '0', String(INGEST)], { cwd: ROOT }) : null
const saltEnv = source ? { SALTDECK_SALT_URL: source.info.url, SALTDECK_SALT_USERNAME: 'bench', SALTDECK_SALT_PASSWORD: 'x', SALTDECK_SALT_EAUTH: 'sharedsecret' } : {}
const server = Bun.spawn(['bun', 'run', 'src/main.ts', 'serve', '--data-dir', DATA_DIR, '--port', String(port), ...(DATABASE_URL ? ['--database-url', DATABASE_URL] : [])], {
  cwd: ROOT, stdout: logFd, stderr: logFd, env: { ...process.env, SALTDECK_ADMIN_PASSWORD: PASSWORD, ...saltEnv },
})
let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  server.kill('SIGTERM')
  source?.proc.kill()
  await Promise.race([server.exited, Bun.sleep(10_000)])
  if (server.exitCode === null) server.kill('SIGKILL')
}
process.on('SIGINT', () => stop().then(() => process.exit(130)))
// A failure anywhere below (wrk error, failed check) must not leave the server running on the data dir.
process.on('exit', () => {
  if (server.exitCode === null) server.kill('SIGKILL')
  source?.proc.kill()
})

const startAt = performance.now()
for (;;) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break
  } catch {}
  if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}; see ${logPath}`)
  if (performance.now() - startAt > 600_000) throw new Error('server did not start in 600 s')
  await Bun.sleep(100)
}
const startupMs = Math.round(performance.now() - startAt)

/** The process that serves: `bun run` may exec in place or fork; follow single children down. */
function servingPid(pid: number): number {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
    return kids.length === 1 ? servingPid(Number(kids[0])) : pid
  } catch {
    return pid
  }
}
const PID = servingPid(server.pid)
interface Mem { rss: number; anon: number; file: number; hwm: number }
function mem(): Mem | null {
  try {
    const s = readFileSync(`/proc/${PID}/status`, 'utf8')
    const kb = (k: string) => Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN) / 1024
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') }
  } catch {
    return null
  }
}
const memIdleStart = mem()
console.log(`[load] ${ENGINE}${DATABASE_URL ? ` (${DATABASE_URL})` : ''}: server pid ${PID} on ${base}, up in ${startupMs} ms, RSS ${memIdleStart?.rss.toFixed(1)} MB; log ${logPath}`)

// ---------------------------------------------------------------------------------------------------------------
// Login and sanity checks

const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
if (!login.ok) throw new Error(`login failed: ${login.status} ${await login.text()}`)
const me = (await login.json()) as { must_change_pw: boolean }
if (me.must_change_pw) throw new Error('admin has must_change_pw: seed with SALTDECK_ADMIN_PASSWORD')
const cookie = (login.headers.getSetCookie?.() ?? [login.headers.get('set-cookie') ?? '']).map((c) => c.split(';')[0]!).find((c) => c.startsWith('saltdeck_session='))
if (!cookie) throw new Error('no saltdeck_session cookie')
const H = { cookie }
{
  // Serving only: no poller asks salt (the stand-in answers none of their calls, and an inventory refresh is measured by
  // bench/inventory.ts: its catalog would count in the serving RSS here). With --ingest the event stream runs.
  const off = {
    minion_state_keys_interval_seconds: 0, minion_state_presence_interval_seconds: 0, minion_state_grains_interval_seconds: 0,
    fleet_poll_interval_seconds: 0, jobs_poll_interval_seconds: 0, inventory_refresh_minutes: 0, event_stream_enabled: !!source,
  }
  const put = await fetch(`${base}/api/admin/settings/pollers`, { method: 'PUT', headers: { ...H, 'content-type': 'application/json' }, body: JSON.stringify(off) })
  if (!put.ok) throw new Error(`settings: ${put.status} ${await put.text()}`)
}
const getJson = async (path: string) => (await (await fetch(base + path, { headers: H })).json()) as any
/** Events stored so far, and those not yet in the search index. */
const eventCount = async () => (await getJson('/api/activity?limit=1')).total as number
const indexLag = async () => Number(/^saltdeck_search_index_pending_events (\d+)/m.exec(await (await fetch(`${base}/metrics`, { headers: H })).text())?.[1])
// A package most minions hold, and one of its versions, for the versions list and the version query.
const commonName = (await getJson('/api/inventory/packages?sort=minion_count&limit=1')).items[0].name as string
const commonVersion = (await getJson(`/api/inventory/packages/${encodeURIComponent(commonName)}/versions`)).versions[0].version as string

const ids = readFileSync(IDS_FILE, 'utf8').split('\n').filter(Boolean)
interface Endpoint { name: string; path: string; lua?: boolean; conns: number[]; target: { p99: number; rps?: number } | null; onlyAsked?: boolean }
const endpoints: Endpoint[] = [
  { name: 'packages', path: '/api/inventory/packages', conns: [CONNS], target: { p99: 25 } },
  { name: 'packages_q_lib', path: '/api/inventory/packages?q=lib', conns: [CONNS], target: { p99: 25 } },
  { name: 'activity', path: '/api/activity', conns: [CONNS], target: { p99: 20 } },
  { name: 'activity_since60', path: '/api/activity?since_minutes=60', conns: [CONNS], target: { p99: 20 } },
  { name: 'activity_search_web', path: '/api/activity?search=web', conns: [CONNS], target: { p99: 20 } },
  { name: 'activity_hide_routine', path: '/api/activity?hide_routine=true', conns: [CONNS], target: { p99: 20 } },
  { name: 'activity_event_type', path: '/api/activity?event_type=minion.offline', conns: [CONNS], target: { p99: 20 } },
  { name: 'activity_categories', path: '/api/activity?categories=key,minion', conns: [CONNS], target: { p99: 20 } },
  { name: 'minions', path: '/api/minions', conns: [CONNS], target: null },
  { name: 'versions', path: `/api/inventory/packages/${encodeURIComponent(commonName)}/versions`, conns: [CONNS], target: null },
  { name: 'version_query_common', path: `/api/inventory/packages/${encodeURIComponent(commonName)}/minions?op=eq&version=${encodeURIComponent(commonVersion)}`, conns: [CONNS], target: null },
  { name: 'minion_runs', path: '/api/minions/<random id>/runs', lua: true, conns: RUNS_CONNS, target: null },
  // Vulnerabilities (issue 13): only on a data dir bench/vulns.ts prepared (a feed imported; pkg-0 held by most minions).
  { name: 'vulns', path: '/api/vulns', conns: [CONNS], target: { p99: 25 }, onlyAsked: true },
  { name: 'vulns_high', path: '/api/vulns?severity=high', conns: [CONNS], target: { p99: 25 }, onlyAsked: true },
  { name: 'version_query', path: `/api/inventory/packages/pkg-0/minions?op=lt&version=${F['pivot'] ?? '2.1.0'}`, conns: [CONNS], target: { p99: 25 }, onlyAsked: true },
  { name: 'vuln_detail', path: '/api/vulns/BENCH-00000', conns: [CONNS], target: { p99: 25 }, onlyAsked: true },
  // References without a target: the HTTP stack alone (public, no database) and authentication alone.
  { name: 'ref_healthz', path: '/healthz', conns: [CONNS], target: null },
  { name: 'ref_auth_me', path: '/api/auth/me', conns: [CONNS], target: null },
].filter((e) => (ONLY ? ONLY.has(e.name) : !e.onlyAsked))

const sanity: Record<string, unknown> = {}
for (const e of endpoints) {
  const path = e.lua ? `/api/minions/${encodeURIComponent(ids[Math.floor(ids.length / 3)]!)}/runs` : e.path
  const times: number[] = []
  let body: any
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    const res = await fetch(base + path, { headers: H })
    body = await res.json()
    times.push(performance.now() - t)
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
  }
  const items = body.items ?? body.events ?? body.runs ?? body.vulns ?? body.minions ?? [body]
  sanity[e.name] = { path, total: body.total, returned: items?.length, bytes: JSON.stringify(body).length, first_ms: +times[0]!.toFixed(2), warm_ms: +Math.min(...times.slice(1)).toFixed(2) }
  console.log(`[load] ${e.name.padEnd(20)} ${path}: total=${body.total} returned=${items?.length} first=${times[0]!.toFixed(1)}ms warm=${Math.min(...times.slice(1)).toFixed(1)}ms`)
  if (!items?.length) throw new Error(`${path} returned no rows`)
}

// ---------------------------------------------------------------------------------------------------------------
// wrk

/** The 1-minute load average now (the machine is shared: each round records it). */
const load1 = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])

interface WrkResult { load1: number; cpuUsPerReq: number; cpuUtil: number; rps: number; p50: number; p75: number; p90: number; p99: number; avg: number; max: number; requests: number; non2xx: number; socketErrors: string | null; rssMaxMb: number }
async function wrk(e: Endpoint, conns: number, seconds: number): Promise<WrkResult> {
  const args = [which!, `-t${THREADS}`, `-c${conns}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-H', `Cookie: ${cookie}`]
  if (e.lua) args.push('-s', join(ROOT, 'bench/runs.lua'), base, '--', IDS_FILE)
  else args.push(base + e.path)
  let rssMax = 0
  const loadAtStart = load1()
  const cpu0 = cpuSeconds(PID)
  const wall0 = performance.now()
  const sampler = setInterval(() => {
    const m = mem()
    if (m && m.rss > rssMax) rssMax = m.rss
  }, 250)
  const p = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  await p.exited
  clearInterval(sampler)
  const cpuMs = (cpuSeconds(PID) - cpu0) * 1000
  const wallMs = performance.now() - wall0
  const m = mem()
  if (m && m.rss > rssMax) rssMax = m.rss
  if (p.exitCode !== 0) throw new Error(`wrk failed: ${err}\n${out}`)
  await drain()
  const pct = (q: string) => wrkMs(out.match(new RegExp(`^\\s+${q}%\\s+(\\S+)`, 'm'))?.[1] ?? '')
  const lat = out.match(/^\s+Latency\s+(\S+)\s+(\S+)\s+(\S+)/m)
  const requests = Number(out.match(/(\d+) requests in/)?.[1])
  return {
    load1: loadAtStart, cpuUsPerReq: (cpuMs * 1000) / requests, cpuUtil: cpuMs / wallMs,
    rps: Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]), p50: pct('50'), p75: pct('75'), p90: pct('90'), p99: pct('99'),
    avg: wrkMs(lat?.[1] ?? ''), max: wrkMs(lat?.[3] ?? ''), requests: Number(out.match(/(\d+) requests in/)?.[1]),
    non2xx: Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0), socketErrors: out.match(/Socket errors:.*$/m)?.[0] ?? null, rssMaxMb: rssMax,
  }
}

/**
 * Waits until the server has finished what wrk left queued (wrk stops sending at the deadline, but requests
 * already accepted are still served): two /healthz answers under 10 ms in a row. Without this, a slow case
 * (search=) bleeds seconds of backlog into the next case's latencies.
 */
async function drain() {
  const until = performance.now() + 120_000
  let fast = 0
  while (fast < 2 && performance.now() < until) {
    const t = performance.now()
    await fetch(`${base}/healthz`)
    fast = performance.now() - t < 10 ? fast + 1 : 0
  }
}


const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const cases = endpoints.flatMap((e) => e.conns.map((c) => ({ e, c, key: `${e.name}@c${c}` })))
const raw: Record<string, WrkResult[]> = Object.fromEntries(cases.map((x) => [x.key, []]))
console.log(`[load] wrk -t${THREADS} -d${DURATION}s; ${cases.length} cases x ${ROUNDS} rounds (interleaved), 3 s warm-up each`)
for (const x of cases) await wrk(x.e, x.c, 3)
const ingestStart = { events: await eventCount(), at: performance.now() }
const roundLoads: number[][] = []
for (let round = 1; round <= ROUNDS; round++) {
  roundLoads.push([load1()])
  for (const x of cases) {
    const r = await wrk(x.e, x.c, DURATION)
    raw[x.key]!.push(r)
    roundLoads[round - 1]!.push(r.load1)
    console.log(`[load] round ${round} ${x.key.padEnd(24)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  max ${r.max.toFixed(1).padStart(6)} ms  cpu ${r.cpuUsPerReq.toFixed(0).padStart(6)} µs/req (${(r.cpuUtil * 100).toFixed(0)}% of a core)  rss ${r.rssMaxMb.toFixed(1)} MB  load ${r.load1}${r.non2xx ? `  NON-2XX ${r.non2xx}` : ''}${r.socketErrors ? `  ${r.socketErrors}` : ''}`)
  }
}

const ingested = { events: (await eventCount()) - ingestStart.events, seconds: (performance.now() - ingestStart.at) / 1000, indexLag: await indexLag() }
// The memory guard's full collections over the whole run (issue 27 item 2: are they the pauses?).
const metricsText = await (await fetch(`${base}/metrics`, { headers: H })).text()
const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metricsText)?.[1] ?? NaN)
const guard = { collections: metric('saltdeck_memory_collections_total'), seconds: metric('saltdeck_memory_collection_seconds_total'), longest_s: metric('saltdeck_memory_collection_longest_seconds') }
// RSS after the load, once the process has settled.
await Bun.sleep(5000)
const memAfter = mem()
const eventsLastHour = ((await (await fetch(`${base}/api/activity?since_minutes=60&limit=1`, { headers: H })).json()) as { total: number }).total
await stop()

// ---------------------------------------------------------------------------------------------------------------
// Report

const f2 = (n: number) => n.toFixed(2)
const rows = cases.map((x) => {
  const rs = raw[x.key]!
  const med = { cpuUsPerReq: median(rs.map((r) => r.cpuUsPerReq)), cpuUtil: median(rs.map((r) => r.cpuUtil)), rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), rss: Math.max(...rs.map((r) => r.rssMaxMb)) }
  const pass = x.e.target === null ? null : med.p99 <= x.e.target.p99 && (x.e.target.rps === undefined || med.rps >= x.e.target.rps)
  const bad = rs.reduce((n, r) => n + r.non2xx, 0)
  return { key: x.key, path: x.e.path, conns: x.c, median: med, raw: rs, target: x.e.target, pass, non2xx: bad }
})
const lines = [
  `| endpoint | wrk | req/s median (raw) | p50 ms median (raw) | p99 ms median (raw) | server CPU µs/req (core busy) | target | result |`,
  `|---|---|---|---|---|---|---|---|`,
  ...rows.map((r) => `| \`${r.path}\` | -t${THREADS} -c${r.conns} -d${DURATION}s | **${r.median.rps.toFixed(0)}** (${r.raw.map((x) => x.rps.toFixed(0)).join(', ')}) | **${f2(r.median.p50)}** (${r.raw.map((x) => f2(x.p50)).join(', ')}) | **${f2(r.median.p99)}** (${r.raw.map((x) => f2(x.p99)).join(', ')}) | ${r.median.cpuUsPerReq.toFixed(0)} (${(r.median.cpuUtil * 100).toFixed(0)}%) | ${r.target ? `p99 ≤ ${r.target.p99} ms${r.target.rps ? `, ≥ ${r.target.rps.toLocaleString('en-US')} req/s` : ''}` : '(reference)'} | ${r.pass === null ? '—' : r.pass ? 'PASS' : 'FAIL'}${r.non2xx ? ` (${r.non2xx} non-2xx!)` : ''} |`),
]
const rssPeak = Math.max(...rows.map((r) => r.median.rss))
const memLine = `Server RSS: idle after start ${memIdleStart?.rss.toFixed(1)} MB; peak during load ${rssPeak.toFixed(1)} MB; 5 s after load ${memAfter?.rss.toFixed(1)} MB ` +
  `(RssAnon ${memAfter?.anon.toFixed(1)} MB + RssFile ${memAfter?.file.toFixed(1)} MB; VmHWM ${memAfter?.hwm.toFixed(1)} MB) — target ≤ 150 MB: ${Math.max(rssPeak, memAfter?.rss ?? 0) <= 150 ? 'PASS' : 'FAIL'}`
const rpsOf = (name: string) => rows.find((r) => r.key.startsWith(`${name}@`))?.median.rps
const ratio = (name: string) => (rpsOf(name) && rpsOf('ref_healthz') ? (rpsOf(name)! / rpsOf('ref_healthz')!).toFixed(2) : 'n/a')
const floorLine = `Request floor (req/s against /healthz in the same run): auth/me ${ratio('ref_auth_me')} (target ≥ 0.5), runs ${ratio('minion_runs')} (target ≥ 0.6)`
const ingestLine = INGEST
  ? `Background ingest asked ${INGEST}/s: ${ingested.events} events stored in ${ingested.seconds.toFixed(0)} s (${(ingested.events / ingested.seconds).toFixed(0)}/s); search index backlog at the end: ${ingested.indexLag} events`
  : 'No background ingest (--ingest 0)'
// Pauses (issue 27 item 2): the slowest single request of each case over all its rounds, against 50 ms.
const slowest = rows.map((r) => `${r.key} ${Math.max(...r.raw.map((x) => x.max)).toFixed(1)} ms`).join(', ')
const pauseLine = `Slowest request per case (wrk's max, target ≤ 50 ms): ${slowest}; memory guard: ${guard.collections} full collections, ${(guard.seconds * 1000).toFixed(0)} ms in all, longest ${(guard.longest_s * 1000).toFixed(1)} ms`
const loadLine = `Load average (1 min) per round, min–max over its cases: ${roundLoads.map((ls) => `${Math.min(...ls)}–${Math.max(...ls)}`).join(', ')}`
console.log('\n' + lines.join('\n') + '\n\n' + loadLine + '\n' + memLine + '\n' + floorLine + '\n' + pauseLine + '\n' + ingestLine + `\nEvents in the last 60 min at the end of the load: ${eventsLastHour}`)
mkdirSync(dirname(OUT), { recursive: true })
writeFileSync(OUT, JSON.stringify({
  at: new Date().toISOString(), engine: ENGINE, database_url: DATABASE_URL, commit: Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim(),
  load_per_round: roundLoads.map((ls) => ({ min: Math.min(...ls), max: Math.max(...ls) })), data_dir: DATA_DIR, seed_info: { ...info, admin_password: undefined, minion_ids_sample: undefined }, wrk: { threads: THREADS, duration_s: DURATION, rounds: ROUNDS },
  startup_ms: startupMs, sanity, rows, mem: { idle_start: memIdleStart, peak_during_load_mb: rssPeak, after: memAfter }, events_last_hour_at_end: eventsLastHour, ingest: { asked_per_s: INGEST, ...ingested }, table_md: lines.join('\n'), mem_md: memLine, floor_md: floorLine, pause_md: pauseLine, memory_guard: guard, ingest_md: ingestLine,
}, null, 2) + '\n')
console.log(`[load] wrote ${OUT}`)
process.exit(0)
