#!/usr/bin/env bun
/**
 * In-process timing and query plans of the benchmarked read paths, without HTTP.
 *
 *   bun bench/explain.ts --data-dir bench/data/fleet [--iterations 50] [--out bench/data/explain.md]
 *
 * Calls the service functions the routes call (listPackages, listEvents, listRuns, and the per-request
 * authentication queries) on the seeded database, captures every SQL statement they run with its arguments,
 * and prints for each endpoint: the service call's median/p99 time, then each statement's median time and its
 * EXPLAIN QUERY PLAN. Run it while the server is stopped (it opens the database itself).
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join, resolve, dirname } from 'node:path'
import { parseFlags } from '../src/cli'
import type { Database } from 'bun:sqlite'
import { openDb } from '../src/db/client'
import { loadConfig } from '../src/config'
import { systemClock } from '../src/lib/clock'
import { Logger } from '../src/lib/log'
import type { AppDeps } from '../src/deps'
import { listPackages } from '../src/features/inventory/service'
import { listEvents } from '../src/features/activity/service'
import { listRuns } from '../src/features/runs/service'
import { grantsOf } from '../src/features/auth/service'

const F = parseFlags(process.argv.slice(2), [])
const DATA_DIR = resolve(F['data-dir'] ?? 'bench/data/fleet')
const ITER = Number(F.iterations ?? 50)
const OUT = resolve(F.out ?? join(dirname(DATA_DIR), 'explain.md'))
if (!existsSync(join(DATA_DIR, 'saltdeck.db'))) throw new Error(`no saltdeck.db in ${DATA_DIR}`)

const db = openDb(join(DATA_DIR, 'saltdeck.db'))
const deps: AppDeps = { db, config: loadConfig(process.env, { dataDir: DATA_DIR }), clock: systemClock, log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) }
const client: Database = db.$client

// Capture every statement a call runs, with its arguments.
let capture: { sql: string; args: unknown[] }[] | null = null
const wrap = <T extends object>(st: T, sql: string): T =>
  new Proxy(st, {
    get(t: any, p) {
      const v = t[p]
      if (typeof v !== 'function') return v
      if (capture && ['get', 'all', 'run', 'values', 'iterate'].includes(String(p)))
        return (...a: unknown[]) => {
          capture?.push({ sql, args: a })
          return v.apply(t, a)
        }
      return v.bind(t)
    },
  })
const origQuery = client.query.bind(client)
const origPrepare = client.prepare.bind(client)
;(client as any).query = (sql: string) => wrap(origQuery(sql), sql)
;(client as any).prepare = (sql: string) => wrap(origPrepare(sql), sql)

const adminId = origQuery("SELECT id FROM users WHERE username_key = 'admin'").get() as { id: string }
const grants = await grantsOf(deps, adminId.id)
const ids = readFileSync(join(DATA_DIR, 'minion-ids.txt'), 'utf8').split('\n').filter(Boolean)
let k = 0
const someId = () => ids[(k = (k * 7919 + 104729) % ids.length)]!

const cases: { name: string; call: () => unknown }[] = [
  { name: 'GET /api/inventory/packages', call: async () => await listPackages(deps, { limit: 100, offset: 0 }) },
  { name: 'GET /api/inventory/packages?q=lib', call: async () => await listPackages(deps, { q: 'lib', limit: 100, offset: 0 }) },
  { name: 'GET /api/activity', call: () => listEvents(deps, {}, grants, 100, 0) },
  { name: 'GET /api/activity?since_minutes=60', call: () => listEvents(deps, { since_minutes: 60 }, grants, 100, 0) },
  { name: 'GET /api/activity?search=web', call: () => listEvents(deps, { search: 'web' }, grants, 100, 0) },
  { name: 'GET /api/minions/<id>/runs', call: () => listRuns(deps, someId(), { limit: 20, offset: 0 }) },
  {
    name: 'per-request auth (session lookup + grants)',
    call: () => {
      origQuery(`SELECT s.id AS session_id, s.expires_at, u.id AS user_id, u.username, u.display_name, u.must_change_pw, u.is_active
       FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?1`).get('0'.repeat(64))
      return grantsOf(deps, adminId.id)
    },
  },
]

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!
}
const out: string[] = [`# In-process timings and query plans`, ``, `Data dir: \`${DATA_DIR}\`; ${ITER} iterations per call (after one warm-up); times in ms.`, ``]
for (const c of cases) {
  capture = []
  await c.call()
  const stmts = capture
  capture = null
  const times: number[] = []
  const n = ITER
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await c.call()
    times.push(performance.now() - t)
    if (i > 3 && times.reduce((a, b) => a + b, 0) > 20_000) break // slow call: enough samples
  }
  out.push(`## ${c.name}`, ``, `Service call: median **${q(times, 0.5).toFixed(3)} ms**, p99 ${q(times, 0.99).toFixed(3)} ms (${times.length} calls)`, ``)
  for (const s of stmts) {
    const st = origQuery(s.sql)
    const ts: number[] = []
    for (let i = 0; i < Math.max(3, Math.min(n, 20)); i++) {
      const t = performance.now()
      ;(st as any).all(...s.args)
      ts.push(performance.now() - t)
      if (i > 2 && ts.reduce((a, b) => a + b, 0) > 5_000) break
    }
    const plan = (origQuery(`EXPLAIN QUERY PLAN ${s.sql}`) as any).all(...s.args) as { id: number; parent: number; detail: string }[]
    const depth = new Map<number, number>([[0, 0]])
    const planText = plan.map((p) => {
      const d = (depth.get(p.parent) ?? 0) + 1
      depth.set(p.id, d)
      return `${'  '.repeat(d - 1)}${p.detail}`
    })
    out.push('```sql', s.sql.replace(/\s+/g, ' ').trim(), '```', `args ${JSON.stringify(s.args)} — median ${q(ts, 0.5).toFixed(3)} ms`, '```', ...planText, '```', ``)
  }
}
const text = out.join('\n')
console.log(text)
writeFileSync(OUT, text + '\n')
console.error(`[explain] wrote ${OUT}`)
