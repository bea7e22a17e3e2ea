#!/usr/bin/env bun
/**
 * The "flat as it grows" table: p50/p99 of each read path at several fleet sizes, from bench/load.ts result files.
 *
 *   bun bench/flat.ts bench/data/load-5000.json bench/data/load-20000.json bench/data/load-50000.json
 *
 * Each file's fleet size is read from its seed info (minions). Prints one markdown row per endpoint with, per size,
 * the median p50 / p99 in ms, and the ratio of the largest fleet's p50 to the smallest's.
 */
import { readFileSync } from 'node:fs'

interface Row { key: string; path: string; median: { p50: number; p99: number; rps: number } }
interface Result { seed_info: { params?: { minions?: number; events?: number } }; rows: Row[] }

const files = process.argv.slice(2)
if (!files.length) {
  console.log('usage: bun bench/flat.ts RESULT.json...')
  process.exit(2)
}
const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Result).sort((a, b) => (a.seed_info.params?.minions ?? 0) - (b.seed_info.params?.minions ?? 0))
const sizes = results.map((r) => `${(r.seed_info.params?.minions ?? 0).toLocaleString('en-US')} minions / ${(r.seed_info.params?.events ?? 0).toLocaleString('en-US')} events`)
const keys = [...new Set(results.flatMap((r) => r.rows.map((x) => x.key)))]
const lines = [
  `| endpoint | ${sizes.map((s) => `${s}: p50 / p99 ms`).join(' | ')} | p50 largest ÷ smallest |`,
  `|---|${sizes.map(() => '---|').join('')}---|`,
]
for (const key of keys) {
  const cells = results.map((r) => r.rows.find((x) => x.key === key))
  const first = cells[0]
  const last = cells[cells.length - 1]
  const path = (first ?? last)!.path
  const growth = first && last ? (last.median.p50 / first.median.p50).toFixed(2) : 'n/a'
  lines.push(`| \`${path}\` | ${cells.map((c) => (c ? `${c.median.p50.toFixed(2)} / ${c.median.p99.toFixed(2)}` : '—')).join(' | ')} | ${growth} |`)
}
console.log(lines.join('\n'))
