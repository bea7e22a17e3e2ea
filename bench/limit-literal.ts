#!/usr/bin/env bun
/**
 * Why stores write LIMIT as a literal (db/sql.ts limitOf): the activity page's statement on a migrated, empty database,
 * run with LIMIT and OFFSET bound, with LIMIT literal and OFFSET bound, and with both literal.
 *
 *   bun bench/limit-literal.ts [--runs 20000] [--rounds 5]
 *
 * Prints the median µs per run of each form over interleaved rounds.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../src/db/client'
import { migrate } from '../src/db/migrate'
import { parseFlags } from '../src/cli'

const F = parseFlags(process.argv.slice(2), [])
const RUNS = Number(F.runs ?? 20000)
const ROUNDS = Number(F.rounds ?? 5)
const db = openDb(join(mkdtempSync(join(tmpdir(), 'saltdeck-limit-')), 'saltdeck.db'))
await migrate(db)
const page = (limit: string, offset: string) =>
  `SELECT "activity_events"."id", "activity_events"."ts", "activity_events"."summary" FROM "activity_events" ORDER BY "activity_events"."ts" DESC, "activity_events"."id" DESC LIMIT ${limit} OFFSET ${offset}`
const forms: [string, string, number[]][] = [
  ['LIMIT ? OFFSET ?', page('?', '?'), [20, 0]],
  ['LIMIT 20 OFFSET ?', page('20', '?'), [0]],
  ['LIMIT 20 OFFSET 0', page('20', '0'), []],
]
const times = new Map<string, number[]>(forms.map(([n]) => [n, []]))
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, text, params] of forms) {
    const s = db.$client.query(text)
    const t0 = Bun.nanoseconds()
    for (let i = 0; i < RUNS; i++) s.all(...(params as never[]))
    times.get(name)!.push((Bun.nanoseconds() - t0) / RUNS / 1000)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log('| statement form | µs per run, median (rounds) |\n|---|---|')
for (const [name, xs] of times) console.log(`| \`${name}\` | ${median(xs).toFixed(2)} (${xs.map((x) => x.toFixed(2)).join(', ')}) |`)
