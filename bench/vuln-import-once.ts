/**
 * One vulnerability import and nothing else, in the checkout ROOT names (default this one), on a data dir made by
 * bench/vulns.ts (copy it first: the import writes to it); prints the import's phases (feeds.ts `lastApply`) as JSON.
 * Two checkouts in turn, a fresh copy each round:
 *
 *   ROOT=/path/to/checkout bun bench/vuln-import-once.ts COPY_OF_DATA_DIR DATA_DIR/all.zip
 */
import { resolve } from 'node:path'

const root = process.env.ROOT ?? resolve(import.meta.dir, '..')
const [dir, zip] = process.argv.slice(2) as [string, string]
const { loadConfig } = await import(`${root}/src/config.ts`)
const { openDataDir } = await import(`${root}/src/server.ts`)
const { Logger } = await import(`${root}/src/lib/log.ts`)
const { importFeed, lastApply } = await import(`${root}/src/features/vulns/feeds.ts`)
const { readRecords } = await import(`${root}/src/features/vulns/osv-read.ts`)
const deps = await openDataDir(loadConfig({ SALTDECK_ADMIN_PASSWORD: 'bench-vulns-pw' }, { dataDir: dir }), new Logger('json', () => {}, true))
const t0 = performance.now()
await importFeed(deps, readRecords([zip]), 'bench all.zip')
console.log(JSON.stringify({ import_ms: Math.round(performance.now() - t0), ...lastApply }))
process.exit(0)
