/**
 * Inventory-refresh benchmark (issue 3): a full refresh of N minions × P packages from bench/pkg-source.ts, then a
 * repeat refresh after 1% of packages changed. Times both and samples peak RSS. Run: bun bench/inventory.ts [N] [P]
 * On PostgreSQL: SALTDECK_DATABASE_URL=postgres://…/emptydb bun bench/inventory.ts [N] [P]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { Logger } from '../src/lib/log'
import { SaltClient } from '../src/salt/client'
import { saltCredentials } from '../src/features/settings/service'
import { applyFacts } from '../src/features/ingest/apply'
import { noFacts } from '../src/salt/facts'
import { startRefresh } from '../src/features/inventory/service'
import { refreshInventory, refreshOptions } from '../src/features/inventory/refresh'
import { PackageSetWriter } from '../src/features/inventory/writer'
import { spawnAnnounced } from './harness'
import { holderTiming } from '../src/features/inventory/holders'
import { rematchTiming } from '../src/features/vulns/watch'
import { sql } from 'drizzle-orm'

const N = Number(process.argv[2] ?? 50_000)
const P = Number(process.argv[3] ?? 1500)
const { proc: src, info: source } = await spawnAnnounced<{ url: string }>(['bun', 'bench/pkg-source.ts', String(N), String(P)])

const dir = mkdtempSync(join(tmpdir(), 'sd-inv-'))
const config = loadConfig({ SALTDECK_SALT_URL: source.url, SALTDECK_SALT_USERNAME: 'bench', SALTDECK_SALT_PASSWORD: 'x', SALTDECK_SALT_EAUTH: 'sharedsecret', SALTDECK_ADMIN_PASSWORD: 'bench-pw', SALTDECK_INVENTORY_BATCH: process.env.SALTDECK_INVENTORY_BATCH, SALTDECK_INVENTORY_FLUSH: process.env.SALTDECK_INVENTORY_FLUSH, SALTDECK_DATABASE_URL: process.env.SALTDECK_DATABASE_URL }, { dataDir: dir })
const deps = await openDataDir(config, new Logger('json', () => {}, true))
const opts = refreshOptions(deps, new SaltClient(() => saltCredentials(deps)))
const ids = Array.from({ length: N }, (_, i) => `m-${String(i).padStart(5, '0')}`)
await applyFacts(deps, [{ ...noFacts(), keys: ids.map((minionId) => ({ minionId, act: 'accept' as const, ts: 0 })), presentList: { ids, ts: 0 } }])

// Time spent storing (flush: diff + SQLite), to split the refresh into storing and the rest (salt answers, scanning).
let flushMs = 0
let flushes = 0
const flush = PackageSetWriter.prototype.flush
PackageSetWriter.prototype.flush = async function (this: PackageSetWriter, ...args: Parameters<typeof flush>) {
  const t0 = performance.now()
  try {
    return await flush.apply(this, args)
  } finally {
    flushMs += performance.now() - t0
    flushes++
  }
}

let peak = 0
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100)
async function timed(label: string) {
  Bun.gc(true)
  peak = process.memoryUsage().rss
  flushMs = 0
  flushes = 0
  const h0 = { ms: holderTiming.totalMs, rows: holderTiming.rows, vulns: rematchTiming.totalMs }
  const cpu0 = process.cpuUsage()
  const r = (await startRefresh(deps, '*'))!
  const t0 = performance.now()
  const answered = await refreshInventory(deps, opts, r.refresh_id, '*')
  const s = (performance.now() - t0) / 1000
  const rows = Math.floor(Number((await deps.db.row<{ n: number }>(sql`SELECT coalesce(sum(length(keys)), 0) AS n FROM minion_package_sets`))!.n) / 4)
  const cpu = process.cpuUsage(cpu0)
  const out = {
    label, seconds: Math.round(s * 10) / 10, minions: answered, rows, peak_rss_mb: Math.round(peak / 1e6),
    store_s: Math.round(flushMs / 100) / 10, flushes, cpu_s: Math.round((cpu.user + cpu.system) / 1e5) / 10,
    // Parts of store_s: the holder index's chunk writes and the vulnerability re-match (issue 13).
    holders_s: Math.round((holderTiming.totalMs - h0.ms) / 100) / 10, holder_rows: holderTiming.rows - h0.rows, vulns_s: Math.round((rematchTiming.totalMs - h0.vulns) / 100) / 10,
  }
  console.log(JSON.stringify(out))
  return out
}
const first = await timed('full refresh')
await fetch(`${source.url}/bench/generation`, { method: 'POST' })
const repeat = await timed('repeat refresh, 1% changed')
clearInterval(sampler)
src.kill()
await deps.db.close()
rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify({ engine: deps.db.engine, N, P, batch: opts.batch, flush: deps.config.inventoryFlushMinions, first, repeat }))
