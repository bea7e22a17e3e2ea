#!/usr/bin/env bun
/**
 * The same reads on two engines: for each fleet size, a bench/load.ts result on SQLite beside one on PostgreSQL, with
 * the medians of each and PostgreSQL ÷ SQLite for p50, p99 and req/s.
 *
 *   bun bench/engines.ts bench/data/load-sqlite-5000.json bench/data/load-postgres-5000.json [more pairs…]
 *
 * Files are paired by the fleet size in their seed info and told apart by the `engine` load.ts records.
 */
import { readFileSync } from 'node:fs'

interface Row { key: string; path: string; median: { p50: number; p99: number; rps: number } }
interface Result { engine?: string; seed_info: { params?: { minions?: number; events?: number } }; rows: Row[]; load_per_round?: { min: number; max: number }[] }

const files = process.argv.slice(2)
if (!files.length) {
  console.log('usage: bun bench/engines.ts RESULT.json...')
  process.exit(2)
}
const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Result)
const sizes = [...new Set(results.map((r) => r.seed_info.params?.minions ?? 0))].sort((a, b) => a - b)
const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : 'n/a')
const loads = (r: Result) => (r.load_per_round ?? []).map((l) => `${l.min}–${l.max}`).join(', ')
for (const size of sizes) {
  const lite = results.find((r) => (r.seed_info.params?.minions ?? 0) === size && (r.engine ?? 'sqlite') === 'sqlite')
  const pg = results.find((r) => (r.seed_info.params?.minions ?? 0) === size && r.engine === 'postgres')
  if (!lite || !pg) {
    console.log(`${size.toLocaleString('en-US')} minions: need one SQLite and one PostgreSQL result`)
    continue
  }
  const lines = [
    `${size.toLocaleString('en-US')} minions / ${(lite.seed_info.params?.events ?? 0).toLocaleString('en-US')} events; load per round SQLite ${loads(lite)}, PostgreSQL ${loads(pg)}`,
    '',
    '| endpoint | SQLite p50 / p99 ms, req/s | PostgreSQL p50 / p99 ms, req/s | p50 PG ÷ SQLite | p99 PG ÷ SQLite | req/s PG ÷ SQLite |',
    '|---|---|---|---|---|---|',
  ]
  for (const a of lite.rows) {
    const b = pg.rows.find((x) => x.key === a.key)
    const cell = (r: Row) => `${r.median.p50.toFixed(2)} / ${r.median.p99.toFixed(2)}, ${r.median.rps.toFixed(0)}`
    lines.push(`| \`${a.path}\` | ${cell(a)} | ${b ? cell(b) : '—'} | ${b ? ratio(b.median.p50, a.median.p50) : '—'} | ${b ? ratio(b.median.p99, a.median.p99) : '—'} | ${b ? ratio(b.median.rps, a.median.rps) : '—'} |`)
  }
  console.log(lines.join('\n') + '\n')
}
