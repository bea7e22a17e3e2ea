#!/usr/bin/env bun
/**
 * The PostgreSQL engine before and after its move to Bun.sql (issue 24): src/db/postgres.ts of another checkout (on
 * postgres.js) beside this checkout's (on Bun.sql), in one process, on one throwaway PostgreSQL cluster, rounds
 * interleaved and the order rotated each round. Both run the same drizzle `sql` statements through `rows`/`row`/
 * `exec`/`tx`, so the figures include the engine's rendering and its int8 conversion.
 *
 *   git worktree add --detach /work/wt/driver-before main && (cd /work/wt/driver-before && bun install --frozen-lockfile)
 *   bun bench/pg-engine.ts --before /work/wt/driver-before [--rounds 7]
 */
import { parseArgs } from 'node:util'
import { join, resolve } from 'node:path'
import { loadavg } from 'node:os'
import { sql, type SQL } from 'drizzle-orm'
import { postgresEngine } from '../src/db/postgres'
import type { Engine } from '../src/db/engine'
import { startCluster, stopCluster } from '../test/helpers/pg-cluster'

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, before: { type: 'string' } } })
if (!args.before) throw new Error('--before DIR: a checkout of the engine to compare with (see the header)')
const ROUNDS = Number(args.rounds)
const KV_ROWS = 10_000
const POINTS = 2_000
const RANGES = 400
const ACTIVITY_ROWS = 20_000
const BATCH = 500
const TXS = 150

const before = (await import(join(resolve(args.before), 'src/db/postgres.ts'))) as { postgresEngine: typeof postgresEngine }
const cluster = startCluster()
const url = cluster.url()

type Activity = (string | number | null)[]
const CATS = ['job', 'minion', 'key'] as const
const activity: Activity[] = Array.from({ length: ACTIVITY_ROWS }, (_, i) => {
  const minion = `web-${String(i % 5000).padStart(5, '0')}.dc1.example.com`
  const cat = CATS[i % 17 === 0 ? 1 : i % 23 === 0 ? 2 : 0]!
  return [1_790_000_000_000 + i * 37, cat, cat === 'job' ? 'job.ret' : `${cat}.online`, minion, `2026112617${String(i).padStart(8, '0')}`,
    'state.apply', i % 3 === 0 ? 0 : 1, i % 5 === 0 ? 1 : 0, 'api:admin', minion, 1000 + (i % 9000), `${minion} returned state.apply`]
})
const cols = sql.raw('ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary')
const insert = (rows: Activity[]): SQL => sql`INSERT INTO activity_bench (${cols}) VALUES ${sql.join(rows.map((r) => sql`(${sql.join(r.map((v) => sql`${v}`), sql`, `)})`), sql`, `)}`

const engines: { name: string; e: Engine }[] = [
  { name: 'engine on postgres.js (before)', e: before.postgresEngine(url) },
  { name: 'engine on Bun.sql (after)', e: postgresEngine(url) },
]

await engines[1]!.e.exec(sql.raw(`
  CREATE TABLE kv (id int8 PRIMARY KEY, name text NOT NULL, val int8 NOT NULL, ts int8 NOT NULL, note text);
  INSERT INTO kv SELECT g, 'web-' || lpad(g::text, 5, '0') || '.dc1.example.com', g * 7, 1790000000000 + g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'note ' || g END
    FROM generate_series(1, ${KV_ROWS}) g;
  CREATE TABLE activity_bench (id bigserial PRIMARY KEY, ts int8 NOT NULL, category text NOT NULL, event_type text NOT NULL,
    minion_id text, jid text, fun text, success integer, changed integer, initiator text, target text, duration_ms int8, summary text NOT NULL);
  CREATE INDEX activity_bench_ts ON activity_bench (ts, id);
  CREATE INDEX activity_bench_minion_ts ON activity_bench (minion_id, ts, id);`))
await engines[1]!.e.exec(sql`VACUUM ANALYZE kv`)

const rand = (() => { let s = 42; return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) })()
const ids = Array.from({ length: POINTS }, () => 1 + (rand() % KV_ROWS))

const cases: { name: string; unit: string; run: (e: Engine) => Promise<number> }[] = [
  { name: 'point read by primary key, sequential', unit: 'µs/query', run: async (e) => {
    const t = performance.now()
    for (const id of ids) if ((await e.row<{ id: number }>(sql`SELECT id, name, val, ts, note FROM kv WHERE id = ${id}`))?.id !== id) throw new Error('wrong row')
    return ((performance.now() - t) * 1000) / POINTS
  } },
  { name: '100-row read (ORDER BY id LIMIT 100)', unit: 'µs/query', run: async (e) => {
    const t = performance.now()
    for (let i = 0; i < RANGES; i++) {
      const rows = await e.rows<{ val: number }>(sql`SELECT id, name, val, ts, note FROM kv WHERE id >= ${1 + ((i * 97) % (KV_ROWS - 100))} ORDER BY id LIMIT 100`)
      if (rows.length !== 100 || typeof rows[0]!.val !== 'number') throw new Error('short range or int8 not a number')
    }
    return ((performance.now() - t) * 1000) / RANGES
  } },
  { name: `multi-row INSERT, activity rows, batches of ${BATCH}`, unit: 'rows/s', run: async (e) => {
    await e.exec(sql`TRUNCATE activity_bench`)
    const t = performance.now()
    for (let i = 0; i < ACTIVITY_ROWS; i += BATCH) await e.exec(insert(activity.slice(i, i + BATCH)))
    return ACTIVITY_ROWS / ((performance.now() - t) / 1000)
  } },
  { name: 'transaction of 20 statements (10 UPDATE + 10 SELECT)', unit: 'ms/tx', run: async (e) => {
    const t = performance.now()
    for (let i = 0; i < TXS; i++) {
      const id = 1 + ((i * 131) % (KV_ROWS - 10))
      await e.tx(async (tx) => {
        for (let k = 0; k < 10; k++) {
          await tx.exec(sql`UPDATE kv SET val = val + 1 WHERE id = ${id + k}`)
          await tx.row(sql`SELECT val FROM kv WHERE id = ${id + k}`)
        }
      })
    }
    return (performance.now() - t) / TXS
  } },
]

const results = new Map<string, number[]>()
const loads: string[] = []
for (let round = 0; round <= ROUNDS; round++) {
  for (const k of cases) {
    for (let i = 0; i < engines.length; i++) {
      const { name, e } = engines[(i + round) % engines.length]!
      const v = await k.run(e)
      if (round > 0) results.set(`${k.name}|${name}`, [...(results.get(`${k.name}|${name}`) ?? []), v])
    }
  }
  if (round > 0) loads.push(loadavg()[0]!.toFixed(1))
  console.error(round === 0 ? 'warm-up done' : `round ${round}/${ROUNDS} done, load ${loads.at(-1)}`)
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const fmt = (v: number) => (v >= 1000 ? Math.round(v).toLocaleString('en-US') : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2))
const version = (await engines[1]!.e.row<{ server_version: string }>(sql`SHOW server_version`))!
console.log(`\nPostgreSQL ${version.server_version}, Bun ${Bun.version}, ${ROUNDS} rounds (load average per round: ${loads.join(', ')}), median (raw rounds)\n`)
console.log(`| case | unit | ${engines.map((e) => e.name).join(' | ')} | after / before |`)
console.log(`|---|---|${engines.map(() => '---').join('|')}|---|`)
for (const k of cases) {
  const m = engines.map((e) => median(results.get(`${k.name}|${e.name}`)!))
  const cells = engines.map((e, i) => `**${fmt(m[i]!)}** (${results.get(`${k.name}|${e.name}`)!.map(fmt).join(', ')})`)
  const ratio = k.unit.endsWith('/s') ? m[1]! / m[0]! : m[0]! / m[1]!
  console.log(`| ${k.name} | ${k.unit} | ${cells.join(' | ')} | ${ratio.toFixed(2)}x faster |`)
}
for (const { e } of engines) await e.close()
stopCluster(cluster)
