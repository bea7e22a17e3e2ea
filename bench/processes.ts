#!/usr/bin/env bun
/**
 * One serving process against two on one port (SO_REUSEPORT) and one WAL database: what a second core buys.
 *
 *   bun bench/processes.ts --data-dir bench/data/fleet-50000 [--rounds 3] [--duration 5] [--threads 1] [--conns 16]
 *
 * Each round starts N = 1, then N = 2 processes of bench/serve-http.ts (HTTP only), runs wrk against each endpoint,
 * and stops them; rounds are interleaved. The server CPU is the sum over the N processes (utime + stime). Prints the
 * median req/s, p99 and CPU per request of each endpoint for 1 and 2 processes, and the ratio 2 : 1.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseFlags } from '../src/cli'
import { cpuSeconds, freePort, spawnAnnounced, wrkMs } from './harness'

const F = parseFlags(process.argv.slice(2), [])
const DATA_DIR = resolve(F['data-dir'] ?? 'bench/data/fleet-50000')
const ROUNDS = Number(F.rounds ?? 3)
const DURATION = Number(F.duration ?? 5)
const THREADS = Number(F.threads ?? 1)
const CONNS = Number(F.conns ?? 16)
const ROOT = resolve(import.meta.dir, '..')
const PASSWORD: string = JSON.parse(readFileSync(join(DATA_DIR, 'bench-info.json'), 'utf8')).admin_password ?? 'bench-admin-pw'
const IDS_FILE = join(DATA_DIR, 'minion-ids.txt')
const wrkBin = Bun.which('wrk')
if (!wrkBin) throw new Error('wrk not found: apt-get install -y wrk')

const endpoints: { name: string; path: string; lua?: boolean }[] = [
  { name: 'healthz', path: '/healthz' },
  { name: 'auth_me', path: '/api/auth/me' },
  { name: 'minion_runs', path: '', lua: true },
  { name: 'activity', path: '/api/activity' },
  { name: 'activity_search_web', path: '/api/activity?search=web' },
  { name: 'packages_q_lib', path: '/api/inventory/packages?q=lib' },
]

/** Starts n serving processes on one port, one after the other (each opens the data dir when the last is up). */
async function start(n: number, port: number) {
  const procs = []
  for (let i = 0; i < n; i++) {
    const p = await spawnAnnounced<{ pid: number }>(['bun', 'bench/serve-http.ts', DATA_DIR, String(port)], { cwd: ROOT, env: { ...process.env, SALTDECK_ADMIN_PASSWORD: PASSWORD } })
    procs.push({ proc: p.proc, pid: p.info.pid })
  }
  return procs
}


const results: Record<string, { rps: number; p99: number; cpuUs: number }[]> = {}
for (let round = 1; round <= ROUNDS; round++) {
  for (const n of [1, 2]) {
    const port = freePort()
    const procs = await start(n, port)
    const base = `http://127.0.0.1:${port}`
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
    if (!login.ok) throw new Error(`login: ${login.status}`)
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!
    for (const e of endpoints) {
      const args = [wrkBin, `-t${THREADS}`, `-c${CONNS}`, `-d${DURATION}s`, '--latency', '-H', `Cookie: ${cookie}`]
      args.push(...(e.lua ? ['-s', join(ROOT, 'bench/runs.lua'), base, '--', IDS_FILE] : [base + e.path]))
      // A short untimed run first: caches and JIT warm in each process.
      await Bun.spawn([...args.slice(0, 3), '-d2s', ...args.slice(4)], { stdout: 'ignore' }).exited
      const cpu0 = procs.reduce((s, p) => s + cpuSeconds(p.pid), 0)
      const out = await new Response(Bun.spawn(args, { stdout: 'pipe' }).stdout).text()
      const cpu = (procs.reduce((s, p) => s + cpuSeconds(p.pid), 0) - cpu0) * 1e6 // µs
      const requests = Number(out.match(/(\d+) requests in/)?.[1])
      const r = { rps: Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]), p99: wrkMs(out.match(/^\s+99%\s+(\S+)/m)?.[1] ?? ''), cpuUs: cpu / requests }
      ;(results[`${e.name}@${n}`] ??= []).push(r)
      console.log(`[processes] round ${round} ${n} process(es) ${e.name.padEnd(22)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99.toFixed(2)} ms  ${r.cpuUs.toFixed(0)} µs CPU/req`)
    }
    for (const p of procs) p.proc.kill('SIGTERM')
    await Promise.all(procs.map((p) => p.proc.exited))
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`\n| endpoint | 1 process: req/s, p99 ms, CPU µs/req | 2 processes: req/s, p99 ms, CPU µs/req | req/s 2 : 1 |`)
console.log('|---|---|---|---|')
for (const e of endpoints) {
  const one = results[`${e.name}@1`]!
  const two = results[`${e.name}@2`]!
  const m = (rs: typeof one) => ({ rps: median(rs.map((r) => r.rps)), p99: median(rs.map((r) => r.p99)), cpu: median(rs.map((r) => r.cpuUs)) })
  const a = m(one)
  const b = m(two)
  console.log(`| ${e.name} | ${a.rps.toFixed(0)} (${one.map((r) => r.rps.toFixed(0)).join(', ')}), ${a.p99.toFixed(2)}, ${a.cpu.toFixed(0)} | ${b.rps.toFixed(0)} (${two.map((r) => r.rps.toFixed(0)).join(', ')}), ${b.p99.toFixed(2)}, ${b.cpu.toFixed(0)} | ${(b.rps / a.rps).toFixed(2)} |`)
}
