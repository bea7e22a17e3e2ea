#!/usr/bin/env bun
/**
 * Read throughput of 1, 2 and 4 Saltdeck instances on one PostgreSQL database, beside one instance on SQLite
 * (issue 25 item 5, issue 27 item 6).
 *
 *   bun bench/instances.ts --data-dir bench/data/fleet-5000 [--rounds 3] [--duration 8] [--conns 16] [--counts 1,2,4]
 *                          [--only healthz,minions,...] [--out FILE]
 *
 * DIR is a seeded data directory (bench/seed.ts). The script starts a throwaway PostgreSQL 15 cluster
 * (test/helpers/pg-cluster.ts, then shared_buffers 512MB as in bench/RESULTS.md "Issue 24"), copies DIR into it with
 * `saltdeck migrate-to-postgres` and VACUUM (ANALYZE), then starts one `serve` on DIR (SQLite) and as many `serve` on
 * the PostgreSQL database as the largest count, each with its own port and data directory (DIR's secret.key), every
 * salt poller off. A case is one endpoint on one configuration: for N instances, N wrk processes run at once, one per
 * instance's port, with the connections split evenly (16 in all by default), so every configuration offers the same
 * load. Instances not in the case stay up and idle. Rounds are interleaved (every endpoint on every configuration,
 * then again), each case once warmed up first. Per case: req/s summed over the ports, p99 the worst port's, the
 * Saltdeck processes' and PostgreSQL's CPU per request (from /proc), and the load average. Prints medians with the
 * rounds and writes the raw figures as JSON.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseFlags } from '../src/cli'
import { openPostgres } from '../src/db/client'
import { sql } from '../src/db/sql'
import { pgBinDir, startCluster, stopCluster } from '../test/helpers/pg-cluster'
import { cpuSeconds, freePort, wrkMs } from './harness'

const F = parseFlags(process.argv.slice(2), [])
const DATA_DIR = resolve(F['data-dir'] ?? 'bench/data/fleet-5000')
const ROUNDS = Number(F.rounds ?? 3)
const DURATION = Number(F.duration ?? 8)
const CONNS = Number(F.conns ?? 16)
const COUNTS = (F.counts ?? '1,2,4').split(',').map(Number)
const ONLY = F.only ? new Set(F.only.split(',')) : null
const OUT = resolve(F.out ?? join(dirname(DATA_DIR), `instances-results-${new Date().toISOString().replace(/[:.]/g, '-')}.json`))
const ROOT = resolve(import.meta.dir, '..')
const WRK = Bun.which('wrk')
if (!WRK) throw new Error('wrk not found: apt-get install -y wrk')
if (!existsSync(join(DATA_DIR, 'saltdeck.db'))) throw new Error(`no saltdeck.db in ${DATA_DIR}: run bench/seed.ts first`)
const info = existsSync(join(DATA_DIR, 'bench-info.json')) ? JSON.parse(readFileSync(join(DATA_DIR, 'bench-info.json'), 'utf8')) : {}
const PASSWORD: string = info.admin_password ?? process.env.SALTDECK_ADMIN_PASSWORD ?? 'bench-admin-pw'
const IDS_FILE = join(DATA_DIR, 'minion-ids.txt')
const load1 = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim()

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL: a throwaway cluster holding a copy of the fleet

const cluster = startCluster()
// startCluster stops it at exit; a signal must end the process through exit too.
process.on('SIGINT', () => process.exit(130))
process.on('SIGTERM', () => process.exit(143))
const pgAs = (args: string[]) => {
  const bin = join(pgBinDir(), args[0]!)
  const r = process.getuid?.() === 0 ? spawnSync('runuser', ['-u', 'postgres', '--', bin, ...args.slice(1)], { encoding: 'utf8' }) : spawnSync(bin, args.slice(1), { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr || r.stdout}`)
}
{
  const admin = openPostgres(cluster.url())
  await admin.exec(sql.raw(`ALTER SYSTEM SET shared_buffers = '512MB'`))
  await admin.exec(sql.raw('CREATE DATABASE fleet'))
  await admin.close()
  // pg_ctl restart keeps the options the cluster was started with (postmaster.opts); -l, or the new postmaster would
  // hold this process's pipe and spawnSync would wait on it for ever.
  pgAs(['pg_ctl', '-D', join(cluster.dir, 'data'), '-l', join(cluster.dir, 'log'), '-w', '-m', 'fast', 'restart'])
}
const URL = cluster.url('fleet')
let t = performance.now()
const copy = spawnSync('bun', ['run', 'src/main.ts', 'migrate-to-postgres', '--data-dir', DATA_DIR, '--database-url', URL], { cwd: ROOT, encoding: 'utf8' })
if (copy.status !== 0) throw new Error(`migrate-to-postgres failed:\n${copy.stdout}\n${copy.stderr}`)
{
  const db = openPostgres(URL)
  await db.exec(sql.raw('VACUUM (ANALYZE)'))
  await db.close()
}
console.log(`[instances] fleet copied to PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s (load ${load1()})`)

/** PostgreSQL's CPU seconds so far: the postmaster and every process it started (backends, walwriter, …). */
const postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
function pgCpu(): number {
  let s = 0
  const kids = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  for (const pid of [postmaster, ...kids]) {
    try {
      s += cpuSeconds(pid)
    } catch {
      // Gone meanwhile.
    }
  }
  return s
}

// ---------------------------------------------------------------------------------------------------------------
// The servers

const scratch = mkdtempSync(join(tmpdir(), 'saltdeck-instances-'))
interface Server { name: string; port: number; base: string; proc: ReturnType<typeof Bun.spawn>; pid: number; cookie: string }
const servers: Server[] = []
process.on('exit', () => {
  for (const s of servers) if (s.proc.exitCode === null) s.proc.kill('SIGKILL')
  stopCluster(cluster)
  rmSync(scratch, { recursive: true, force: true })
})

/** The process that serves: `bun run` may exec in place or fork; follow single children down. */
function servingPid(pid: number): number {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
    return kids.length === 1 ? servingPid(Number(kids[0])) : pid
  } catch {
    return pid
  }
}

async function startServer(name: string, dataDir: string, databaseUrl?: string): Promise<Server> {
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  const log = openSync(join(scratch, `${name}.log`), 'a')
  const proc = Bun.spawn(['bun', 'run', 'src/main.ts', 'serve', '--data-dir', dataDir, '--port', String(port), ...(databaseUrl ? ['--database-url', databaseUrl] : [])], {
    cwd: ROOT, stdout: log, stderr: log, env: { ...process.env, SALTDECK_ADMIN_PASSWORD: PASSWORD },
  })
  const t0 = performance.now()
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break
    } catch {}
    if (proc.exitCode !== null) throw new Error(`${name} exited; see ${join(scratch, `${name}.log`)}`)
    if (performance.now() - t0 > 300_000) throw new Error(`${name} did not start`)
    await Bun.sleep(100)
  }
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
  if (!login.ok) throw new Error(`${name}: login ${login.status}`)
  const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('saltdeck_session='))!
  const s = { name, port, base, proc, pid: servingPid(proc.pid), cookie }
  servers.push(s)
  return s
}

const off = {
  minion_state_keys_interval_seconds: 0, minion_state_presence_interval_seconds: 0, minion_state_grains_interval_seconds: 0,
  fleet_poll_interval_seconds: 0, jobs_poll_interval_seconds: 0, inventory_refresh_minutes: 0, event_stream_enabled: false,
}
const pollersOff = async (s: Server) => {
  const r = await fetch(`${s.base}/api/admin/settings/pollers`, { method: 'PUT', headers: { cookie: s.cookie, 'content-type': 'application/json' }, body: JSON.stringify(off) })
  if (!r.ok) throw new Error(`${s.name}: settings ${r.status} ${await r.text()}`)
}

const lite = await startServer('sqlite', DATA_DIR)
await pollersOff(lite)
const pg: Server[] = []
for (let i = 0; i < Math.max(...COUNTS); i++) {
  const dir = join(scratch, `pg${i}`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  copyFileSync(join(DATA_DIR, 'secret.key'), join(dir, 'secret.key'))
  pg.push(await startServer(`pg${i}`, dir, URL))
}
// Settings are shared on PostgreSQL: one change reaches every instance within a second.
await pollersOff(pg[0]!)
await Bun.sleep(1500)
console.log(`[instances] sqlite on :${lite.port}; ${pg.length} PostgreSQL instances on :${pg.map((s) => s.port).join(', :')}; load ${load1()}`)

// ---------------------------------------------------------------------------------------------------------------
// Cases

const ids = readFileSync(IDS_FILE, 'utf8').split('\n').filter(Boolean)
const firstPackage = async (s: Server) => ((await (await fetch(`${s.base}/api/inventory/packages?limit=1`, { headers: { cookie: s.cookie } })).json()) as any).items[0].name as string
interface Endpoint { name: string; path: string; lua?: boolean }
const endpoints: Endpoint[] = [
  { name: 'healthz', path: '/healthz' },
  { name: 'minions', path: '/api/minions' },
  { name: 'activity', path: '/api/activity' },
  { name: 'minion_runs', path: '/api/minions/<random id>/runs', lua: true },
  { name: 'packages', path: '/api/inventory/packages' },
  { name: 'package_versions', path: `/api/inventory/packages/${encodeURIComponent(await firstPackage(lite))}/versions` },
].filter((e) => !ONLY || ONLY.has(e.name))
interface Config { name: string; servers: Server[] }
const configs: Config[] = [{ name: 'sqlite x1', servers: [lite] }, ...COUNTS.map((n) => ({ name: `pg x${n}`, servers: pg.slice(0, n) }))]

// Every case answers 200 with rows before it is timed.
for (const c of configs)
  for (const e of endpoints)
    for (const s of c.servers) {
      const path = e.lua ? `/api/minions/${encodeURIComponent(ids[7]!)}/runs` : e.path
      const r = await fetch(s.base + path, { headers: { cookie: s.cookie } })
      if (r.status !== 200) throw new Error(`${s.name} ${path}: ${r.status}`)
      await r.arrayBuffer()
    }

interface Result { rps: number; p99: number; p50: number; appUsPerReq: number; pgUsPerReq: number; load1: number; requests: number; errors: number }

/** Waits until every server of the case has served what wrk left queued: two fast /healthz answers in a row each. */
async function drain(ss: Server[]) {
  for (const s of ss) {
    const end = performance.now() + 60_000
    for (let fast = 0; fast < 2 && performance.now() < end; ) {
      const t0 = performance.now()
      await fetch(`${s.base}/healthz`)
      fast = performance.now() - t0 < 10 ? fast + 1 : 0
    }
  }
}

async function run(c: Config, e: Endpoint, seconds: number): Promise<Result> {
  const per = Math.max(1, Math.floor(CONNS / c.servers.length))
  const loadAtStart = load1()
  const app0 = c.servers.map((s) => cpuSeconds(s.pid))
  const pg0 = pgCpu()
  const outs = await Promise.all(c.servers.map(async (s) => {
    const args = [WRK!, '-t1', `-c${per}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-H', `Cookie: ${s.cookie}`]
    if (e.lua) args.push('-s', join(ROOT, 'bench/runs.lua'), s.base, '--', IDS_FILE)
    else args.push(s.base + e.path)
    const p = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' })
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
    await p.exited
    if (p.exitCode !== 0) throw new Error(`wrk failed: ${err}\n${out}`)
    return out
  }))
  const appCpu = c.servers.reduce((sum, s, i) => sum + cpuSeconds(s.pid) - app0[i]!, 0)
  const pgCpuUsed = pgCpu() - pg0
  await drain(c.servers)
  const num = (out: string, re: RegExp) => Number(out.match(re)?.[1] ?? 0)
  const pct = (out: string, q: string) => wrkMs(out.match(new RegExp(`^\\s+${q}%\\s+(\\S+)`, 'm'))?.[1] ?? '')
  const requests = outs.reduce((s, o) => s + num(o, /(\d+) requests in/), 0)
  return {
    rps: outs.reduce((s, o) => s + num(o, /Requests\/sec:\s+([\d.]+)/), 0),
    p99: Math.max(...outs.map((o) => pct(o, '99'))),
    p50: Math.max(...outs.map((o) => pct(o, '50'))),
    appUsPerReq: (appCpu * 1e6) / requests,
    pgUsPerReq: (pgCpuUsed * 1e6) / requests,
    load1: loadAtStart,
    requests,
    errors: outs.reduce((s, o) => s + num(o, /Non-2xx or 3xx responses:\s+(\d+)/), 0) + outs.filter((o) => /Socket errors/.test(o)).length,
  }
}

const key = (c: Config, e: Endpoint) => `${e.name} @ ${c.name}`
const raw: Record<string, Result[]> = {}
console.log(`[instances] ${endpoints.length} endpoints x ${configs.length} configurations x ${ROUNDS} rounds of ${DURATION} s (${CONNS} connections in all), 2 s warm-up each`)
for (const e of endpoints) for (const c of configs) await run(c, e, 2)
for (let round = 1; round <= ROUNDS; round++)
  for (const e of endpoints)
    for (const c of configs) {
      const r = await run(c, e, DURATION)
      ;(raw[key(c, e)] ??= []).push(r)
      console.log(`[instances] round ${round} ${key(c, e).padEnd(32)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  saltdeck ${r.appUsPerReq.toFixed(0).padStart(5)} µs/req  postgres ${r.pgUsPerReq.toFixed(0).padStart(5)} µs/req  load ${r.load1}${r.errors ? `  ERRORS ${r.errors}` : ''}`)
    }

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
console.log(`\n| endpoint | ${configs.map((c) => `${c.name} req/s (p99 ms)`).join(' | ')} | ${configs.map((c) => `${c.name} CPU µs/req saltdeck + postgres`).join(' | ')} |`)
console.log(`|---|${configs.map(() => '---').join('|')}|${configs.map(() => '---').join('|')}|`)
for (const e of endpoints) {
  const cells = configs.map((c) => {
    const rs = raw[key(c, e)]!
    return `${median(rs.map((r) => r.rps)).toFixed(0)} (${median(rs.map((r) => r.p99)).toFixed(1)}) [${rs.map((r) => r.rps.toFixed(0)).join(', ')}]`
  })
  const cpu = configs.map((c) => {
    const rs = raw[key(c, e)]!
    return `${median(rs.map((r) => r.appUsPerReq)).toFixed(0)} + ${median(rs.map((r) => r.pgUsPerReq)).toFixed(0)}`
  })
  console.log(`| ${e.name} | ${cells.join(' | ')} | ${cpu.join(' | ')} |`)
}
const loads = Object.values(raw).flat().map((r) => r.load1)
console.log(`\nload average over the rounds: ${Math.min(...loads)}–${Math.max(...loads)}`)
mkdirSync(dirname(OUT), { recursive: true })
writeFileSync(OUT, JSON.stringify({ commit, dataDir: DATA_DIR, rounds: ROUNDS, duration: DURATION, conns: CONNS, counts: COUNTS, raw }, null, 2))
console.log(`[instances] wrote ${OUT}`)
for (const s of servers) s.proc.kill('SIGTERM')
await Promise.all(servers.map((s) => Promise.race([s.proc.exited, Bun.sleep(10_000)])))
process.exit(0)
