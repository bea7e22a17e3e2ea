/**
 * Memory of a served process while it streams a CSV export (contract §16 "Export"): 50,000 minions (with grains) are
 * seeded into a fresh data dir, `saltdeck serve` is started on it, and GET /api/minions?format=csv is read slowly
 * (a pause every 256 KiB, so the server must hold back rather than buffer), sampling the server's VmRSS as rows
 * arrive; then the same for 5,000 minions' worth (a `q` filter) to compare peaks. Flat memory: the peak does not grow
 * with the rows sent, because the body is a ReadableStream pulling one page (src/http/csv.ts CSV_PAGE rows) at a time.
 * Run: bun bench/export-csv.ts [--minions 50000]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './harness'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { Logger } from '../src/lib/log'
import { applyFacts } from '../src/features/ingest/apply'
import { recordGrains } from '../src/features/minions/service'
import { noFacts } from '../src/salt/facts'

const arg = process.argv.indexOf('--minions')
const MINIONS = arg > 0 ? Number(process.argv[arg + 1]) : 50_000
const PASSWORD = 'bench-export-pw'
const root = mkdtempSync(join(tmpdir(), 'export-csv-'))
const dataDir = join(root, 'data')

const mem = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (k: string) => Math.round(Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))![1]) / 1024)
  return { rss_mb: mb('VmRSS'), peak_mb: mb('VmHWM') }
}

// Seed in process, then close: the server is a separate process whose memory alone is measured.
{
  const t0 = performance.now()
  const config = loadConfig({ SALTDECK_ADMIN_PASSWORD: PASSWORD, SALTDECK_DATA_DIR: dataDir }, { dataDir })
  const deps = await openDataDir(config, new Logger('json', () => {}, true))
  const ids = Array.from({ length: MINIONS }, (_, i) => `minion-${String(i).padStart(6, '0')}.example.org`)
  for (let i = 0; i < ids.length; i += 5000) {
    const slice = ids.slice(i, i + 5000)
    await applyFacts(deps, [{ ...noFacts(), keys: slice.map((minionId) => ({ minionId, act: 'accept' as const, ts: Date.now() })) }])
    await recordGrains(deps, slice.map((id, j) => ({ id, grains: { os: 'Debian', os_family: 'Debian', osrelease: '12.5', ipv4: [`10.0.${(i + j) >> 8 & 255}.${(i + j) & 255}`], saltversion: '3007.1' } })))
  }
  deps.db.$client.close()
  console.log(JSON.stringify({ phase: 'seed', minions: MINIONS, seconds: +((performance.now() - t0) / 1000).toFixed(1) }))
}

const port = freePort()
const proc = Bun.spawn(['bun', 'run', 'src/main.ts', 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], {
  stdout: 'ignore', stderr: 'inherit', env: { ...process.env, SALTDECK_ADMIN_PASSWORD: PASSWORD, SALTDECK_LOG_LEVEL: 'warn' },
})
const base = `http://127.0.0.1:${port}`

/** Reads one export slowly, sampling the server's RSS every 1 MiB; returns rows, bytes, seconds and the samples' max. */
async function readExport(path: string, cookie: string) {
  const t0 = performance.now()
  const res = await fetch(base + path, { headers: { cookie } })
  if (res.status !== 200 || res.headers.get('content-type') !== 'text/csv; charset=utf-8') throw new Error(`${path}: ${res.status}`)
  let bytes = 0
  let lines = 0
  let nextSample = 0
  let maxRss = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength
    for (const b of chunk) if (b === 10) lines++
    if (bytes >= nextSample) {
      maxRss = Math.max(maxRss, mem(proc.pid).rss_mb)
      nextSample += 1024 * 1024
    }
    // A slow reader: the server must wait for it, not run ahead and buffer the rest.
    if (bytes % (256 * 1024) < chunk.byteLength) await Bun.sleep(5)
  }
  return { path, rows: lines - 1, mb: +(bytes / 1e6).toFixed(1), seconds: +((performance.now() - t0) / 1000).toFixed(1), max_rss_mb: maxRss, ...mem(proc.pid) }
}

try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break
    if (i > 400) throw new Error('serve did not start')
    await Bun.sleep(50)
  }
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  // One JSON page first, so the idle figure includes the code paths a list read loads.
  await (await fetch(`${base}/api/minions?limit=500`, { headers: { cookie } })).text()
  console.log(JSON.stringify({ phase: 'idle', ...mem(proc.pid) }))
  // A tenth of the fleet (ids minion-0[0-4]…) first, then all of it: a flat stream peaks the same for both.
  console.log(JSON.stringify({ phase: 'export', ...(await readExport(`/api/minions?format=csv&q=${encodeURIComponent('minion-00[0-4]*')}`, cookie)) }))
  console.log(JSON.stringify({ phase: 'export', ...(await readExport('/api/minions?format=csv', cookie)) }))
  console.log(JSON.stringify({ phase: 'export again', ...(await readExport('/api/minions?format=csv', cookie)) }))
} finally {
  proc.kill()
  await proc.exited
  rmSync(root, { recursive: true, force: true })
}
