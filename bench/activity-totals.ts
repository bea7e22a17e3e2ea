#!/usr/bin/env bun
/**
 * Kept activity totals in process (issue 14): for each filter, the first (cold) listEvents on a seeded data dir, then
 * 50 calls after 50 new events were stored (the total brought forward). The server must be stopped.
 *
 *   bun bench/activity-totals.ts bench/data/fleet-50000
 */
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { Logger } from '../src/lib/log'
import { listEvents, recordEvents } from '../src/features/activity/service'
const deps = await openDataDir(loadConfig(process.env, { dataDir: process.argv[2]! }), new Logger('json', () => {}))
const grants = [{ verb: '*', resource_glob: '*' }]
const filters: Record<string, any>[] = [{ since_minutes: 60 }, { search: 'web' }, { hide_routine: true }, { event_type: 'minion.offline' }, { categories: 'key,minion' }, { since_minutes: 60, search: 'web' }, {}]
for (const f of filters) {
  const t0 = performance.now(); const a = await listEvents(deps, f, grants, 100, 0); const cold = performance.now() - t0
  await recordEvents(deps, Array.from({ length: 50 }, (_, i) => ({ ts: Date.now(), category: 'job', event_type: 'job.ret', minion_id: 'web-' + i, jid: '1', fun: 'test.ping', success: true, changed: false, summary: 'web-' + i + ' returned test.ping' })))
  const t1 = performance.now(); let b: any; for (let i = 0; i < 50; i++) b = await listEvents(deps, f, grants, 100, 0); const warm = (performance.now() - t1) / 50
  console.log(JSON.stringify(f).padEnd(40), 'cold', cold.toFixed(1), 'ms  warm', warm.toFixed(3), 'ms  total', a.total, '->', b.total)
}
