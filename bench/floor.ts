#!/usr/bin/env bun
/**
 * The request floor in process: what one request costs inside the service, route by route, without the network.
 *
 *   bun bench/floor.ts [--requests 20000] [--rounds 5] [--data-dir bench/data/fleet-5000]
 *   bun --cpu-prof --cpu-prof-dir=bench/data/prof bench/floor.ts --only auth_me   # where the time goes
 *
 * Opens a fresh data directory (or a seeded one: runs then asks for random minions of its minion-ids.txt), logs the admin in, then sends each request through the same wrapper a live server
 * uses (instrument: metrics and the log line, written in batches to /dev/null as to stdout) into the app's fetch. Rounds are interleaved;
 * prints the median µs per request of each case (wall clock, and the process's CPU time, which a loaded machine inflates
 * less) and its ratio to /healthz.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { createApp, routePatterns } from '../src/app'
import { instrument } from '../src/http/instrument'
import { nullLogger } from './harness'
import { parseFlags } from '../src/cli'

const F = parseFlags(process.argv.slice(2), [])
const N = Number(F.requests ?? 20_000)
const ROUNDS = Number(F.rounds ?? 5)
const ONLY = F.only ? new Set(F.only.split(',')) : null

const seeded = F['data-dir']
const dir = seeded ?? mkdtempSync(join(tmpdir(), 'saltdeck-floor-'))
const password = seeded ? 'bench-admin-pw' : 'floor-admin-pw'
process.env.SALTDECK_ADMIN_PASSWORD = password
const minionIds = seeded ? readFileSync(join(seeded, 'minion-ids.txt'), 'utf8').split('\n').filter(Boolean) : ['web-01']
let pick = 0
const log = nullLogger()
const deps = await openDataDir(loadConfig(process.env, { dataDir: dir, host: '127.0.0.1' }), log)
const app = createApp(deps)
const fetch = instrument(deps, routePatterns(), (req) => app.fetch(req))
const base = 'http://127.0.0.1:8000'

const login = await fetch(new Request(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) }))
if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`)
const cookie = login.headers.get('set-cookie')!.split(';')[0]!

// A package most minions hold, for the versions list (none on a fresh data dir: its case then lists an unknown name).
const top = (await (await fetch(new Request(`${base}/api/inventory/packages?sort=minion_count&limit=1`, { headers: { cookie } }))).json()) as { items: { name: string }[] }
const common = top.items[0]?.name ?? 'none'
const cases: Record<string, () => Request> = {
  healthz: () => new Request(`${base}/healthz`),
  auth_me: () => new Request(`${base}/api/auth/me`, { headers: { cookie } }),
  runs: () => new Request(`${base}/api/minions/${encodeURIComponent(minionIds[(pick = (pick * 7919 + 1) % minionIds.length)]!)}/runs`, { headers: { cookie } }),
  activity: () => new Request(`${base}/api/activity?limit=20`, { headers: { cookie } }),
  activity_default: () => new Request(`${base}/api/activity`, { headers: { cookie } }),
  search: () => new Request(`${base}/api/activity?search=web`, { headers: { cookie } }),
  hide_routine: () => new Request(`${base}/api/activity?hide_routine=true`, { headers: { cookie } }),
  minions: () => new Request(`${base}/api/minions`, { headers: { cookie } }),
  packages: () => new Request(`${base}/api/inventory/packages`, { headers: { cookie } }),
  versions: () => new Request(`${base}/api/inventory/packages/${encodeURIComponent(common)}/versions`, { headers: { cookie } }),
}
const names = Object.keys(cases).filter((n) => !ONLY || ONLY.has(n))
for (const n of names) {
  const r = await fetch(cases[n]!())
  if (r.status !== 200) throw new Error(`${n}: ${r.status} ${await r.text()}`)
}

const us: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const n of names) {
    const make = cases[n]!
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    for (let i = 0; i < N; i++) await (await fetch(make())).arrayBuffer()
    us[n]!.push(((performance.now() - t0) * 1000) / N)
    const c = process.cpuUsage(c0)
    cpu[n]!.push((c.user + c.system) / N)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const floor = us.healthz ? median(us.healthz) : NaN
const rounds = (xs: number[]) => `${median(xs).toFixed(1)} (${xs.map((x) => x.toFixed(1)).join(', ')})`
console.log('| case | µs per request, median (rounds) | CPU µs per request, median (rounds) | healthz / case |')
console.log('|---|---|---|---|')
for (const n of names) console.log(`| ${n} | ${rounds(us[n]!)} | ${rounds(cpu[n]!)} | ${(floor / median(us[n]!)).toFixed(2)} |`)
deps.db.$client.close()
if (!seeded) rmSync(dir, { recursive: true, force: true })
