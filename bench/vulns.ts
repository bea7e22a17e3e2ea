/**
 * Vulnerability benchmark (issue 13). Builds an N-minion × P-package fleet through the real inventory refresh (from
 * bench/pkg-source.ts; 50% Debian 12, 20% Debian 11, 30% Rocky 9 by grains), writes a synthetic OSV feed shaped like
 * Debian's (R records, mostly on few packages, an entry per release, 1–3 ranges each, a Rocky entry on some) as an
 * all.zip, then in a fresh process: the full import and match (time, peak RSS), the re-match of one changed minion
 * (50 minions, 15 packages each), and the read paths under wrk through bench/load.ts.
 * Run: bun bench/vulns.ts [N=50000] [P=1500] [R=30000]   (data in bench/data/vulns-N; wrk needed for the load part)
 * On PostgreSQL: SALTDECK_DATABASE_URL=postgres://…/emptydb bun bench/vulns.ts [N] [P] [R] (an empty database; the
 * read paths under wrk are SQLite only here and are skipped).
 */
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { Logger } from '../src/lib/log'
import { SaltClient } from '../src/salt/client'
import { saltCredentials } from '../src/features/settings/service'
import { applyFacts } from '../src/features/ingest/apply'
import { noFacts } from '../src/salt/facts'
import { startRefresh, minionPackages } from '../src/features/inventory/service'
import { refreshInventory, refreshOptions } from '../src/features/inventory/refresh'
import { PackageSetWriter } from '../src/features/inventory/writer'
import { recordGrains } from '../src/features/minions/service'
import { importFeed, lastApply } from '../src/features/vulns/feeds'
import { readRecords } from '../src/features/vulns/osv-read'
import { planSources } from '../src/features/inventory/sources'
import { rematchTiming } from '../src/features/vulns/watch'
import { spawnAnnounced } from './harness'
import { sql } from '../src/db/sql'

const PASSWORD = 'bench-vulns-pw'
const h = (a: number, b: number) => (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35)) >>> 0
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!
/** Peak and current RSS of this process from /proc (VmHWM is the high-water mark since start). */
const mem = () => {
  const s = readFileSync('/proc/self/status', 'utf8')
  const kb = (k: string) => Math.round(Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))![1]) / 1024)
  return { peak_rss_mb: kb('VmHWM'), rss_mb: kb('VmRSS') }
}
const DATABASE_URL = process.env.SALTDECK_DATABASE_URL
const configFor = (dir: string, extra: Record<string, string | undefined> = {}) =>
  loadConfig({ SALTDECK_ADMIN_PASSWORD: PASSWORD, SALTDECK_DATABASE_URL: DATABASE_URL, ...extra }, { dataDir: dir })

// ---------------------------------------------------------------------------------------------------------------
// The child: import and re-match in a process of their own, so its peak RSS is theirs alone.
if (process.argv[2] === '--child') {
  const [dir, zip, n] = process.argv.slice(3) as [string, string, string]
  const deps = await openDataDir(configFor(dir), new Logger('json', () => {}, true))
  const count = async (q: ReturnType<typeof sql>) => (await deps.db.row<{ n: number }>(q))!.n
  const t0 = performance.now()
  const r = await importFeed(deps, readRecords([zip]), 'bench all.zip')
  const importS = (performance.now() - t0) / 1000
  const afterImport = mem()
  const figures = {
    records: r.records, feeds: r.feeds.map((f) => `${f.ecosystem}:${f.records}`),
    matches: await count(sql`SELECT count(*) AS n FROM vuln_matches`),
    findings: Number(await count(sql`SELECT coalesce(sum(minion_count), 0) AS n FROM vuln_records`)),
    affected_records: await count(sql`SELECT count(*) AS n FROM vuln_records WHERE minion_count > 0`),
    vulnerable_minions: await count(sql`SELECT count(*) AS n FROM vuln_minions WHERE vuln_count > 0`),
  }
  // One changed minion at a time, as an inventory refresh stores a minion whose packages moved: 15 new versions each.
  const writer = await PackageSetWriter.open(deps)
  const times: number[] = []
  const rematchMs: number[] = []
  for (let k = 0; k < 51; k++) {
    const id = `m-${String((k * 997) % Number(n)).padStart(5, '0')}`
    const pkgs = (await minionPackages(deps, id, { limit: 5000, offset: 0 })).packages
    const changed = pkgs.map((p, i) => (i % 100 === k % 100 ? { ...p, version: `${p.version}.${k + 1}` } : p))
    const source = pkgs[0]?.source ?? 'apt'
    const t = performance.now()
    writer.addPackages(id, source, changed)
    await writer.flush()
    if (k) times.push(performance.now() - t), rematchMs.push(rematchTiming.lastMs) // the first flush warms the writer's caches
  }
  console.log(JSON.stringify({
    import_s: +importS.toFixed(1), ...lastApply, ...afterImport, ...figures,
    // The re-match itself (vulns/watch.ts inside the flush), and the whole flush that stores the set around it.
    rematch_one_minion_ms: { median: +median(rematchMs).toFixed(2), p90: +pct(rematchMs, 0.9).toFixed(2), max: +Math.max(...rematchMs).toFixed(2), n: rematchMs.length },
    flush_one_minion_ms: { median: +median(times).toFixed(2), p90: +pct(times, 0.9).toFixed(2), max: +Math.max(...times).toFixed(2) },
    source_plan: (({ keys, minions, jobs }) => ({ keys, minions, calls: jobs.length }))(await planSources(deps)),
  }))
  await deps.db.close()
  process.exit(0)
}

// ---------------------------------------------------------------------------------------------------------------
// The fleet

const N = Number(process.argv[2] ?? 50_000)
const P = Number(process.argv[3] ?? 1500)
const R = Number(process.argv[4] ?? 30_000)
const DIR = resolve(`bench/data/vulns-${N}`)
rmSync(DIR, { recursive: true, force: true })
mkdirSync(DIR, { recursive: true })
const { proc: src, info: source } = await spawnAnnounced<{ url: string }>(['bun', 'bench/pkg-source.ts', String(N), String(P)])
const deps = await openDataDir(configFor(DIR, { SALTDECK_SALT_URL: source.url, SALTDECK_SALT_USERNAME: 'bench', SALTDECK_SALT_PASSWORD: 'x', SALTDECK_SALT_EAUTH: 'sharedsecret' }), new Logger('json', () => {}, true))
const ids = Array.from({ length: N }, (_, i) => `m-${String(i).padStart(5, '0')}`)
await applyFacts(deps, [{ ...noFacts(), keys: ids.map((minionId) => ({ minionId, act: 'accept' as const, ts: 0 })), presentList: { ids, ts: 0 } }])
// pkg-source answers os_family Debian for i % 10 < 7: Debian 12 for half the fleet, Debian 11 for a fifth, Rocky 9 for the rest.
await recordGrains(deps, ids.map((id, i) => ({
  id, grains: i % 10 < 5 ? { os: 'Debian', os_family: 'Debian', osrelease: '12.8', osmajorrelease: 12 } : i % 10 < 7
    ? { os: 'Debian', os_family: 'Debian', osrelease: '11.11', osmajorrelease: 11 } : { os: 'Rocky', os_family: 'RedHat', osrelease: '9.4', osmajorrelease: 9 },
})))
const t0 = performance.now()
const r = (await startRefresh(deps, '*'))!
await refreshInventory(deps, refreshOptions(deps, new SaltClient(() => saltCredentials(deps))), r.refresh_id, '*')
const refreshS = (performance.now() - t0) / 1000
src.kill()
await deps.db.close()
writeFileSync(join(DIR, 'minion-ids.txt'), ids.join('\n') + '\n')
writeFileSync(join(DIR, 'bench-info.json'), JSON.stringify({ admin_password: PASSWORD, minions: N, packages: P, records: R }))
console.log(JSON.stringify({ phase: 'fleet', minions: N, packages: P, refresh_s: +refreshS.toFixed(1) }))

// ---------------------------------------------------------------------------------------------------------------
// The feed: Debian-shaped. Package n's versions in the fleet are `M.0.0` or `M.1.0` with M = 1 + h(n, 1) % 3.

const major = (n: number) => 1 + (h(n, 1) % 3)
const VECTORS = ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:N/A:N', 'CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N']
function record(i: number) {
  const u = h(i, 7) / 2 ** 32
  // Most records fall on few packages (as the kernel, openssl, … dominate Debian's feed); record 0 is on pkg-0.
  const n = i === 0 ? 0 : Math.floor(12_000 * u ** 1.6)
  const pkg = h(i, 3) % 100 < 15 ? `src-only-${i % 3000}` : `pkg-${n}`
  const M = major(n)
  const ranges = () => {
    const out: Record<string, string>[][] = []
    const k = 1 + (h(i, 11) % 3)
    for (let j = 0; j < k; j++) {
      const c = h(i, 20 + j) % 10
      if (c < 4) out.push([{ introduced: '0' }, { fixed: `${M}.1.0` }])
      else if (c < 7) out.push([{ introduced: `${M}.1.0` }, { fixed: `${M}.1.${1 + j}` }])
      else if (c < 9) out.push([{ introduced: '0' }, { last_affected: `${Math.max(0, M - 1)}.9` }])
      else out.push([{ introduced: '0' }])
    }
    return out.map((events) => ({ type: 'ECOSYSTEM', events }))
  }
  const affected = [
    { package: { ecosystem: 'Debian:11', name: pkg }, ranges: ranges() },
    { package: { ecosystem: 'Debian:12', name: pkg }, ranges: ranges() },
    ...(h(i, 5) % 5 === 0 ? [{ package: { ecosystem: 'Rocky Linux:9', name: pkg }, ranges: ranges() }] : []),
  ]
  const s = h(i, 9) % 10
  return {
    id: `BENCH-${String(i).padStart(5, '0')}`, modified: '2026-11-01T00:00:00Z', published: '2026-01-01T00:00:00Z', aliases: [`CVE-2026-${10000 + i}`],
    summary: `synthetic issue ${i} in ${pkg}`, details: `A synthetic record for the benchmark: ${pkg} mishandles input ${i}. `.repeat(3),
    ...(s < 4 ? { database_specific: { severity: ['low', 'medium', 'high', 'critical'][h(i, 13) % 4] } } : s < 7 ? { severity: [{ type: 'CVSS_V3', score: VECTORS[i % 3] }] } : {}),
    affected,
  }
}
const feedDir = join(DIR, 'feed')
mkdirSync(feedDir)
const tf = performance.now()
for (let i = 0; i < R; i++) writeFileSync(join(feedDir, `BENCH-${String(i).padStart(5, '0')}.json`), JSON.stringify(record(i)))
const zip = join(DIR, 'all.zip')
const py = Bun.spawnSync(['python3', '-c', 'import zipfile,sys,os\nwith zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED) as z:\n  [z.write(os.path.join(sys.argv[2],f),f) for f in sorted(os.listdir(sys.argv[2]))]', zip, feedDir])
if (py.exitCode !== 0) throw new Error(`zip: ${py.stderr}`)
rmSync(feedDir, { recursive: true, force: true })
console.log(JSON.stringify({ phase: 'feed', records: R, zip_mb: +(Bun.file(zip).size / 1e6).toFixed(1), seconds: +((performance.now() - tf) / 1000).toFixed(1) }))

// ---------------------------------------------------------------------------------------------------------------
// Import and re-match (child), then the read paths (bench/load.ts)

const child = Bun.spawnSync(['bun', 'bench/vulns.ts', '--child', DIR, zip, String(N)], { stdout: 'pipe', stderr: 'inherit' })
if (child.exitCode !== 0) throw new Error(`import child failed (${child.exitCode})`)
console.log(JSON.stringify({ phase: 'import', ...JSON.parse(child.stdout.toString().trim().split('\n').pop()!) }))
if (DATABASE_URL) console.log('PostgreSQL: the read paths were not measured')
else if (!Bun.which('wrk')) console.log('wrk not found: the read paths were not measured (apt-get install -y wrk)')
else {
  const load = Bun.spawn(['bun', 'bench/load.ts', '--data-dir', DIR, '--only', 'vulns,vulns_high,version_query,vuln_detail,ref_auth_me', '--rounds', '3', '--pivot', `${major(0)}.1.0`], { stdout: 'inherit', stderr: 'inherit' })
  if ((await load.exited) !== 0) throw new Error('bench/load.ts failed')
}
