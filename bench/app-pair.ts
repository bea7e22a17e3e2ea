#!/usr/bin/env bun
/**
 * Two checkouts' cost per request, side by side in one process: each opens its own copy of a seeded fleet and its app's
 * fetch handler is called directly (no HTTP), the two taking turns in short slices, so a shared machine's noise (±20%
 * between runs here) falls on both alike. The app loaded second in a process runs 5-13% slower whatever its code (the
 * same commit against itself: `/healthz` 1.13), so it runs twice, once in each order, and each route's after / before
 * is the geometric mean of the two orders' ratios (each the median of its slices' ratios), where that bias cancels.
 *
 *   bun bench/app-pair.ts BEFORE_ROOT BEFORE_DATA AFTER_ROOT AFTER_DATA [SLICES] [PER_SLICE] [PATH...]
 *
 * Each DATA is a copy of one fleet made by bench/seed.ts (admin bench-admin-pw), opened by its own side's code.
 */
import { Database } from 'bun:sqlite'
import { join } from 'node:path'

const [beforeRoot, beforeData, afterRoot, afterData] = process.argv.slice(2, 6) as [string, string, string, string]
const slices = Number(process.argv[6] ?? 20)
const perSlice = Number(process.argv[7] ?? 200)
/** Requests per side and route before measuring (APP_PAIR_WARM; at least three slices). */
const warm = Number(process.env.APP_PAIR_WARM ?? 600)
process.env.SALTDECK_ADMIN_PASSWORD = 'bench-admin-pw'
const base = 'http://127.0.0.1:8000'

/** One side: its app, logged in, and a request function that checks the answer. */
async function side(root: string, dir: string) {
  const { loadConfig } = await import(`${root}/src/config`)
  const { openDataDir } = await import(`${root}/src/server`)
  const { createApp } = await import(`${root}/src/app`)
  const { nullLogger } = await import(`${root}/bench/harness`)
  const app = createApp(await openDataDir(loadConfig(process.env, { dataDir: dir, host: '127.0.0.1' }), nullLogger()))
  const login = await app.fetch(new Request(`${base}/api/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-admin-pw' }),
  }))
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const get = async (path: string) => {
    const r = await app.fetch(new Request(base + path, { headers: { cookie } }))
    if (r.status !== 200) throw new Error(`${root} ${path}: ${r.status} ${await r.text()}`)
    return r.text()
  }
  // A copy that has not built its search index yet builds it in a thread beside the requests: wait for it.
  for (let t = 0; t < 600; t++) {
    const lag = /^saltdeck_search_index_pending_events (\d+)/m.exec(await get('/metrics'))
    if (!lag || lag[1] === '0') break
    await Bun.sleep(1000)
  }
  return get
}

// The parent runs the two orders as children and combines them.
const order = process.env.APP_PAIR_ORDER
if (!order) {
  const run = (o: string) => {
    const p = Bun.spawnSync(['bun', import.meta.path, ...process.argv.slice(2)], { env: { ...process.env, APP_PAIR_ORDER: o }, stderr: 'inherit' })
    if (p.exitCode !== 0) throw new Error(`order ${o}: exit ${p.exitCode}`)
    return JSON.parse(p.stdout.toString()) as Record<string, { before: number; after: number; ratio: number }>
  }
  const one = run('before-first')
  const two = run('after-first')
  console.log(`| route | before µs | after µs | after / before, before loaded first | after loaded first | after / before |\n|---|---:|---:|---:|---:|---:|`)
  for (const [path, x] of Object.entries(one)) {
    const y = two[path]!
    const f = (n: number) => n.toFixed(1)
    console.log(`| \`${path}\` | ${f((x.before + y.before) / 2)} | ${f((x.after + y.after) / 2)} | ${x.ratio.toFixed(2)} | ${y.ratio.toFixed(2)} | ${Math.sqrt(x.ratio * y.ratio).toFixed(2)} |`)
  }
  process.exit(0)
}
const [first, second] = order === 'before-first' ? [[beforeRoot, beforeData], [afterRoot, afterData]] : [[afterRoot, afterData], [beforeRoot, beforeData]]
const one = await side(first![0]!, first![1]!)
const two = await side(second![0]!, second![1]!)
const [before, after] = order === 'before-first' ? [one, two] : [two, one]

const db = new Database(join(afterData, 'saltdeck.db'), { readonly: true })
const minion = (db.query('SELECT id FROM minions ORDER BY id LIMIT 1 OFFSET 1000').get() as { id: string } | null)?.id
  ?? (db.query('SELECT id FROM minions ORDER BY id LIMIT 1').get() as { id: string }).id
db.close()
const asked = process.argv.slice(8)
const paths = asked.length ? asked : [
  '/api/inventory/packages', '/api/inventory/packages?q=lib', '/api/activity', '/api/activity?search=web',
  '/api/activity?hide_routine=true', '/api/activity?event_type=minion.offline', '/api/activity?categories=key,minion',
  '/api/minions', `/api/minions/${encodeURIComponent(minion)}/runs`, '/api/minions/<minion>/runs', '/healthz', '/api/auth/me',
]

/** Minion ids of the fleet, for paths with `<minion>` (each request another minion, as bench/runs.lua does). */
const ids = (await Bun.file(join(afterData, 'minion-ids.txt')).text().catch(() => '')).split('\n').filter(Boolean)
let next = 0
// A fixed walk through the ids: a prime step visits each before repeating (unless the count is its multiple).
const pathOf = (path: string) => (path.includes('<minion>') ? path.replace('<minion>', encodeURIComponent(ids[(next = (next + 7919) % ids.length)]!)) : path)

/** µs per request over one slice. */
async function slice(get: (p: string) => Promise<string>, path: string) {
  const t0 = Bun.nanoseconds()
  for (let i = 0; i < perSlice; i++) await get(pathOf(path))
  return (Bun.nanoseconds() - t0) / perSlice / 1000
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const out: Record<string, { before: number; after: number; ratio: number }> = {}
for (const path of paths) {
  // Warm both: statements prepared, code compiled, kept totals made. JSC compiles a function again, more optimized, as
  // it keeps running (its DFG and FTL tiers), and a longer request path takes longer to get there: a few hundred
  // requests measure that warm-up more than the steady state a server runs in (APP_PAIR_WARM, requests per side).
  for (let i = 0; i < Math.max(3, Math.ceil(warm / perSlice)); i++) await slice(before, path), await slice(after, path)
  const b: number[] = [], a: number[] = [], ratio: number[] = []
  for (let s = 0; s < slices; s++) {
    // Which side goes first alternates, so neither always runs just after the other's garbage.
    let x: number, y: number
    if (s % 2) {
      x = await slice(after, path)
      y = await slice(before, path)
    } else {
      y = await slice(before, path)
      x = await slice(after, path)
    }
    a.push(x), b.push(y), ratio.push(x / y)
  }
  out[path] = { before: median(b), after: median(a), ratio: median(ratio) }
}
console.log(JSON.stringify(out))
process.exit(0)
