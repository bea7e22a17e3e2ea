#!/usr/bin/env bun
/**
 * The flat table's routes (bench/load.ts) measured in process (bench/app-cost.ts) on two checkouts, sides alternating
 * per round (before first in odd rounds, after first in even ones: which runs second is slower on this machine), each on
 * its own copy of one seeded fleet; prints each route's median wall and CPU µs per request and after / before.
 *
 *   bun bench/app-before-after.ts BEFORE_ROOT AFTER_ROOT SEEDED_DIR [ROUNDS] [REQUESTS]
 */
import { Database } from 'bun:sqlite'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const [before, after, src] = process.argv.slice(2) as [string, string, string]
const rounds = Number(process.argv[5] ?? 3)
const requests = process.argv[6] ?? '4000'
const work = mkdtempSync(join(tmpdir(), 'app-before-after-'))
const dirs = { before: join(work, 'before'), after: join(work, 'after') }
for (const d of Object.values(dirs)) cpSync(src, d, { recursive: true })

// The same routes as the flat table; the package and version are the most held ones, the minion a fixed one.
const db = new Database(join(src, 'saltdeck.db'), { readonly: true })
const minion = (db.query('SELECT id FROM minions ORDER BY id LIMIT 1 OFFSET 1000').get() as { id: string } | null)?.id
  ?? (db.query('SELECT id FROM minions ORDER BY id LIMIT 1').get() as { id: string }).id
db.close()
const paths = [
  '/api/inventory/packages', '/api/inventory/packages?q=lib', '/api/activity', '/api/activity?search=web',
  '/api/activity?hide_routine=true', '/api/activity?event_type=minion.offline', '/api/activity?categories=key,minion',
  '/api/minions', `/api/minions/${encodeURIComponent(minion)}/runs`, '/healthz', '/api/auth/me',
]
const cost = (root: string, dir: string, path: string) => {
  const p = Bun.spawnSync(['bun', join(import.meta.dir, 'app-cost.ts'), root, dir, path, requests], { stderr: 'inherit' })
  if (p.exitCode !== 0) throw new Error(`${root} ${path}: exit ${p.exitCode}`)
  return JSON.parse(p.stdout.toString().trim().split('\n').at(-1)!) as { us: number; cpu_us: number }
}
type Side = { us: number[]; cpu: number[] }
const us: Record<string, { before: Side; after: Side }> = {}
for (let r = 0; r < rounds; r++) {
  for (const path of paths) {
    const e = (us[path] ??= { before: { us: [], cpu: [] }, after: { us: [], cpu: [] } })
    for (const side of r % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
      const m = cost(side === 'before' ? before : after, dirs[side], path)
      e[side].us.push(m.us)
      e[side].cpu.push(m.cpu_us)
    }
  }
  console.error(`round ${r + 1} done, load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}`)
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log('| route | before µs | after µs | after / before | before CPU µs | after CPU µs | after / before |\n|---|---:|---:|---:|---:|---:|---:|')
for (const [path, e] of Object.entries(us)) {
  const [b, a, bc, ac] = [median(e.before.us), median(e.after.us), median(e.before.cpu), median(e.after.cpu)]
  console.log(`| \`${path}\` | ${b.toFixed(1)} | ${a.toFixed(1)} | ${(a / b).toFixed(2)} | ${bc.toFixed(1)} | ${ac.toFixed(1)} | ${(ac / bc).toFixed(2)} |`)
}
rmSync(work, { recursive: true, force: true })
