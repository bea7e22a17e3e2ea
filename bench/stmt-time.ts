#!/usr/bin/env bun
/**
 * SQLite time against the rest, for one route: each statement's mean µs and calls per request, and the request's whole
 * µs, so an engine's per-request cost shows apart from the database's (bun:sqlite's statements timed in place).
 *
 *   bun bench/stmt-time.ts DATA_DIR '/api/activity?search=web'     # DATA_DIR: a seeded fleet (admin bench-admin-pw)
 */
import { Database } from 'bun:sqlite'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { createApp } from '../src/app'
import { nullLogger } from './harness'
const acc = new Map<string, { n: number; us: number }>()
let on = false
let last: () => unknown = () => {}
const wrapped = new WeakSet<object>()
/** Wraps a statement's run methods with a timer, keyed by method and text. */
function timed(s: any, t: string) {
  if (wrapped.has(s)) return s
  wrapped.add(s)
  for (const m of ['all', 'get', 'run', 'values']) {
    const f = s[m]
    s[m] = function (...a: unknown[]) {
      if (!on) return f.apply(this, a)
      const t0 = Bun.nanoseconds(); const r = f.apply(this, a); const d = (Bun.nanoseconds() - t0) / 1000
      const k = m + ' ' + t.slice(0, Number(process.env.W ?? 140)); const e = acc.get(k) ?? { n: 0, us: 0 }; e.n++; e.us += d; acc.set(k, e)
      last = () => f.apply(this, a)
      return r
    }
  }
  return s
}
// The engine prepares its statements (db/sqlite.ts); bun:sqlite's query() is what prepared.ts and older code use.
for (const method of ['query', 'prepare'] as const) {
  const orig = Database.prototype[method] as (...a: unknown[]) => unknown
  Database.prototype[method] = function (this: Database, t: string, ...rest: unknown[]) {
    return timed(orig.call(this, t, ...rest), t)
  } as never
}
process.env.SALTDECK_ADMIN_PASSWORD = 'bench-admin-pw'
const deps = await openDataDir(loadConfig(process.env, { dataDir: process.argv[2]!, host: '127.0.0.1' }), nullLogger())
const app = createApp(deps)
const base = 'http://127.0.0.1:8000'
const login = await app.fetch(new Request(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-admin-pw' }) }))
const cookie = login.headers.get('set-cookie')!.split(';')[0]!
const N = 3000
for (let i = 0; i < 500; i++) await (await app.fetch(new Request(base + process.argv[3]!, { headers: { cookie } }))).text()
on = true
const t0 = performance.now()
for (let i = 0; i < N; i++) await (await app.fetch(new Request(base + process.argv[3]!, { headers: { cookie } }))).text()
const total = (performance.now() - t0) * 1000 / N
on = false
let sq = 0
for (const [k, e] of acc) { sq += e.us / N; console.log((e.us / e.n).toFixed(1).padStart(7), 'µs', (e.n / N).toFixed(2), k) }
console.log('request µs', total.toFixed(1), 'sqlite µs', sq.toFixed(1))
// The last statement again in a loop of its own: its cost without the request around it (allocation, collections).
const l0 = Bun.nanoseconds()
for (let i = 0; i < N; i++) last()
console.log('last statement alone µs', ((Bun.nanoseconds() - l0) / N / 1000).toFixed(1))
process.exit(0)
