#!/usr/bin/env bun
/**
 * The PostgreSQL driver, chosen by measurement (issue 24 item 3): Bun's built-in Bun.sql, raw and through Saltdeck's
 * engine (src/db/postgres.ts), on one throwaway PostgreSQL cluster, in one process, rounds interleaved and the order
 * of the clients rotated each round (the machine is small and noisy). The postgres.js side this bench first compared
 * went with the `postgres` dependency when the engine moved to Bun.sql; its figures stay in bench/RESULTS.md, and
 * bench/pg-engine.ts compares the engine before and after the move.
 *
 *   bun bench/pg-driver.ts [--rounds 5] [--url postgres://...]
 *
 * Cases: point reads by primary key (sequential, and 64 in flight), a 100-row read, multi-row INSERT of
 * activity-shaped rows (batches of 500), COPY FROM STDIN of the same rows, a transaction of 20 statements, and what
 * each client hands back for int8 / numeric. The concurrent reads also count rows delivered to the wrong query
 * (oven-sh/bun#33627, #30494): any non-zero count is printed.
 */
import { parseArgs } from 'node:util'
import { sql, type SQL } from 'drizzle-orm'
import { postgresEngine } from '../src/db/postgres'
import type { Engine } from '../src/db/engine'
import { startCluster, stopCluster, type PgCluster } from '../test/helpers/pg-cluster'

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, url: { type: 'string' } } })
const ROUNDS = Number(args.rounds)
const KV_ROWS = 10_000
const SEQ_POINTS = 2_000
const CONC_POINTS = 6_400
const IN_FLIGHT = 64
const RANGE_READS = 400
const ACTIVITY_ROWS = 20_000
const BATCH = 500
const TXS = 150

const cluster: PgCluster | undefined = args.url ? undefined : startCluster()
const url = args.url ?? cluster!.url()

/** One row of the activity feed as ingest writes it (13 columns, two 0/1 flags, int8 times). */
type Activity = [number, string, string, string | null, string | null, string | null, number | null, number | null, string | null, string | null, number | null, string]
const CATS = ['job', 'minion', 'key'] as const
const activity: Activity[] = Array.from({ length: ACTIVITY_ROWS }, (_, i) => {
  const minion = `web-${String(i % 5000).padStart(5, '0')}.dc1.example.com`
  const cat = CATS[i % 17 === 0 ? 1 : i % 23 === 0 ? 2 : 0]!
  return [1_790_000_000_000 + i * 37, cat, cat === 'job' ? 'job.ret' : `${cat}.online`, minion, `2026112617${String(i).padStart(8, '0')}`,
    'state.apply', i % 3 === 0 ? 0 : 1, i % 5 === 0 ? 1 : 0, 'api:admin', minion, 1000 + (i % 9000), `${minion} returned state.apply`]
})
const ACT_COLS = 'ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary'
const insertText = (n: number) =>
  `INSERT INTO activity_bench (${ACT_COLS}) VALUES ${Array.from({ length: n }, (_, r) => `(${Array.from({ length: 12 }, (_, c) => `$${r * 12 + c + 1}`).join(', ')})`).join(', ')}`
const INSERT_TEXT = insertText(BATCH)
/** COPY's text format: tab-separated, \N for null (no value here holds a tab, newline or backslash). */
const copyText = activity.map((r) => r.map((v) => (v === null ? '\\N' : String(v))).join('\t')).join('\n') + '\n'
const COPY_CHUNKS = Array.from({ length: Math.ceil(copyText.length / 65536) }, (_, i) => copyText.slice(i * 65536, (i + 1) * 65536))

const POINT = 'SELECT id, name, val, ts, note FROM kv WHERE id = $1'
const RANGE = 'SELECT id, name, val, ts, note FROM kv WHERE id >= $1 ORDER BY id LIMIT 100'

/** What each case needs from a client; every client hands back rows with int8 as JS numbers (Bun.sql converts). */
interface Client {
  name: string
  point(id: number): Promise<{ id: number } | undefined>
  range(from: number): Promise<unknown[]>
  insert(rows: Activity[]): Promise<void>
  copy(): Promise<void>
  tx20(id: number): Promise<void>
  int8(): Promise<Record<string, unknown>>
  run(text: string): Promise<unknown>
  close(): Promise<void>
}

/** int8 as strings (Bun.sql's default) turned into numbers, as an engine on Bun.sql would have to for every row. */
const kvRow = (r: any) => ({ id: Number(r.id), name: r.name, val: Number(r.val), ts: Number(r.ts), note: r.note })

function bunSql(): Client {
  const c = new Bun.SQL({ url, max: 10 })
  return {
    name: 'Bun.sql (Bun ' + Bun.version + ')',
    point: async (id) => { const r = (await c.unsafe(POINT, [id]))[0]; return r && kvRow(r) },
    range: async (from) => (await c.unsafe(RANGE, [from])).map(kvRow),
    insert: async (rows) => void (await c.unsafe(INSERT_TEXT, rows.flat())),
    copy: async () => {
      const q = c.unsafe(`COPY activity_bench (${ACT_COLS}) FROM STDIN`)
      const w = q.writable().getWriter()
      for (const chunk of COPY_CHUNKS) await w.write(chunk)
      await w.close()
      await q
    },
    tx20: (id) => c.begin(async (t) => {
      for (let i = 0; i < 10; i++) {
        await t.unsafe('UPDATE kv SET val = val + 1 WHERE id = $1', [id + i])
        await t.unsafe('SELECT val FROM kv WHERE id = $1', [id + i])
      }
    }) as Promise<never>,
    int8: async () => (await c.unsafe('SELECT count(*) AS n, 9007199254740991::int8 AS max_safe, 1790000000123::int8 AS epoch_ms, 12.5::numeric AS num, sum(val) AS sum FROM kv'))[0],
    run: (text) => c.unsafe(text),
    close: () => c.close(),
  }
}

/** Bun.sql through the engine every store uses: drizzle's `sql` rendered to $n text per call, int8 turned into numbers. */
function engine(): Client {
  const e: Engine = postgresEngine(url)
  const cols = sql.raw(ACT_COLS)
  const insert = (rows: Activity[]): SQL => sql`INSERT INTO activity_bench (${cols}) VALUES ${sql.join(rows.map((r) => sql`(${sql.join(r.map((v) => sql`${v}`), sql`, `)})`), sql`, `)}`
  return {
    name: 'engine (Bun.sql)',
    point: (id) => e.row(sql`SELECT id, name, val, ts, note FROM kv WHERE id = ${id}`),
    range: (from) => e.rows(sql`SELECT id, name, val, ts, note FROM kv WHERE id >= ${from} ORDER BY id LIMIT 100`),
    insert: async (rows) => void (await e.exec(insert(rows))),
    copy: async () => {},
    tx20: (id) => e.tx(async (t) => {
      for (let i = 0; i < 10; i++) {
        await t.exec(sql`UPDATE kv SET val = val + 1 WHERE id = ${id + i}`)
        await t.row(sql`SELECT val FROM kv WHERE id = ${id + i}`)
      }
    }),
    int8: async () => (await e.row<Record<string, unknown>>(sql`SELECT count(*) AS n, 9007199254740991::int8 AS max_safe, 1790000000123::int8 AS epoch_ms, 12.5::numeric AS num, sum(val) AS sum FROM kv`))!,
    run: (text) => e.exec(sql.raw(text)),
    close: () => e.close(),
  }
}

// Schema and data (the same tables for every client; activity_bench is emptied before each write).
{
  const setup = new Bun.SQL(url, { max: 1 })
  await setup.unsafe(`
    DROP TABLE IF EXISTS kv, activity_bench;
    CREATE TABLE kv (id int8 PRIMARY KEY, name text NOT NULL, val int8 NOT NULL, ts int8 NOT NULL, note text);
    INSERT INTO kv SELECT g, 'web-' || lpad(g::text, 5, '0') || '.dc1.example.com', g * 7, 1790000000000 + g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'note ' || g END
      FROM generate_series(1, ${KV_ROWS}) g;
    CREATE TABLE activity_bench (id bigserial PRIMARY KEY, ts int8 NOT NULL, category text NOT NULL, event_type text NOT NULL,
      minion_id text, jid text, fun text, success integer, changed integer, initiator text, target text, duration_ms int8, summary text NOT NULL);
    CREATE INDEX activity_bench_ts ON activity_bench (ts, id);
    CREATE INDEX activity_bench_category_ts ON activity_bench (category, ts, id);
    CREATE INDEX activity_bench_minion_ts ON activity_bench (minion_id, ts, id);
    CREATE INDEX activity_bench_jid ON activity_bench (jid);
    CREATE INDEX activity_bench_notable_ts ON activity_bench (ts, id) WHERE NOT (event_type = 'job.ret' AND coalesce(success, 0) = 1 AND coalesce(changed, 0) = 0);
`).simple()
  await setup.unsafe('VACUUM ANALYZE kv')
  await setup.close()
}

const clients = [bunSql(), engine()]
const rand = (() => { let s = 42; return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) })()
const ids = Array.from({ length: CONC_POINTS }, () => 1 + (rand() % KV_ROWS))
let wrongRows = 0

/** Each case: runs once, returns its figure (higher is better for /s, lower for µs and ms). */
const cases: { name: string; unit: string; skip?: (c: Client) => boolean; run: (c: Client) => Promise<number> }[] = [
  { name: 'point read by primary key, sequential', unit: 'µs/query', run: async (c) => {
    const t = performance.now()
    for (let i = 0; i < SEQ_POINTS; i++) if ((await c.point(ids[i]!))?.id !== ids[i]) wrongRows++
    return ((performance.now() - t) * 1000) / SEQ_POINTS
  } },
  { name: `point read by primary key, ${IN_FLIGHT} in flight`, unit: 'queries/s', run: async (c) => {
    let next = 0
    const t = performance.now()
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CONC_POINTS) {
        const id = ids[next++]!
        if ((await c.point(id))?.id !== id) wrongRows++
      }
    }))
    return CONC_POINTS / ((performance.now() - t) / 1000)
  } },
  { name: '100-row read (id range, ORDER BY id LIMIT 100)', unit: 'µs/query', run: async (c) => {
    const t = performance.now()
    for (let i = 0; i < RANGE_READS; i++) if ((await c.range(1 + ((i * 97) % (KV_ROWS - 100)))).length !== 100) throw new Error(`${c.name}: short range`)
    return ((performance.now() - t) * 1000) / RANGE_READS
  } },
  { name: `multi-row INSERT, activity rows, batches of ${BATCH} (5 indexes)`, unit: 'rows/s', run: async (c) => {
    await c.run('TRUNCATE activity_bench')
    const t = performance.now()
    for (let i = 0; i < ACTIVITY_ROWS; i += BATCH) await c.insert(activity.slice(i, i + BATCH))
    return ACTIVITY_ROWS / ((performance.now() - t) / 1000)
  } },
  { name: 'COPY FROM STDIN, the same rows', unit: 'rows/s', skip: (c) => c.name.startsWith('engine'), run: async (c) => {
    await c.run('TRUNCATE activity_bench')
    const t = performance.now()
    await c.copy()
    const s = (performance.now() - t) / 1000
    const n = Number(((await c.run('SELECT count(*) AS n FROM activity_bench')) as any)[0]?.n ?? ACTIVITY_ROWS)
    if (n !== ACTIVITY_ROWS) throw new Error(`${c.name}: COPY stored ${n} rows`)
    return ACTIVITY_ROWS / s
  } },
  { name: 'transaction of 20 statements (10 UPDATE + 10 SELECT)', unit: 'ms/tx', run: async (c) => {
    const t = performance.now()
    for (let i = 0; i < TXS; i++) await c.tx20(1 + ((i * 131) % (KV_ROWS - 10)))
    return (performance.now() - t) / TXS
  } },
]

const results = new Map<string, number[]>()
// One untimed warm-up pass (JIT, prepared statements, connections opened), then the measured rounds.
for (let round = 0; round <= ROUNDS; round++) {
  for (const k of cases) {
    const order = clients.map((_, i) => clients[(i + round) % clients.length]!)
    for (const c of order) {
      if (k.skip?.(c)) continue
      const v = await k.run(c)
      if (round > 0) results.set(`${k.name}|${c.name}`, [...(results.get(`${k.name}|${c.name}`) ?? []), v])
    }
  }
  if (round > 0) console.error(`round ${round}/${ROUNDS} done`)
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const fmt = (v: number) => (v >= 1000 ? Math.round(v).toLocaleString('en-US') : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2))
console.log(`\nPostgreSQL ${(await clients[0]!.run('SHOW server_version') as any)[0].server_version}, Bun ${Bun.version}, ${ROUNDS} rounds, median (raw rounds)\n`)
console.log(`| case | unit | ${clients.map((c) => c.name).join(' | ')} |`)
console.log(`|---|---|${clients.map(() => '---').join('|')}|`)
for (const k of cases) {
  const cells = clients.map((c) => {
    const xs = results.get(`${k.name}|${c.name}`)
    return xs ? `**${fmt(median(xs))}** (${xs.map(fmt).join(', ')})` : 'n/a'
  })
  console.log(`| ${k.name} | ${k.unit} | ${cells.join(' | ')} |`)
}
console.log(`\nrows delivered to the wrong query (all point reads, all rounds): ${wrongRows}\n`)
console.log('int8 / numeric as each client hands them back (`SELECT count(*), 9007199254740991::int8, 1790000000123::int8, 12.5::numeric, sum(int8)`):\n')
for (const c of clients) {
  const r = await c.int8()
  console.log(`- ${c.name}: ${Object.entries(r).map(([k, v]) => `${k} ${typeof v} ${JSON.stringify(v)}`).join('; ')}`)
}
for (const c of clients) await c.close()
if (cluster) stopCluster(cluster)
