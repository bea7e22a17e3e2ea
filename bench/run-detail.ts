/**
 * Run detail benchmark (issue 11): (A) bytes on disk per run when the newest 20 runs of each minion keep their
 * per-state detail, at two fleet sizes, and what storing the raw returns would take instead; (B) the cost of storing
 * detail in the ingest path: state-run returns through applyFacts with SALTDECK_RUN_DETAIL_KEEP=20 and =0, interleaved
 * rounds, plus plain test.ping returns. Run: bun bench/run-detail.ts [minions for A, comma list] [runs per round for B]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../src/db/client'
import { migrate } from '../src/db/migrate'
import { loadConfig } from '../src/config'
import { ManualClock } from '../src/lib/clock'
import { Logger } from '../src/lib/log'
import type { AppDeps } from '../src/deps'
import { applyFacts } from '../src/features/ingest/apply'
import { noFacts, type JobReturned } from '../src/salt/facts'

const SCALES = (process.argv[2] ?? '1000,3000').split(',').map(Number)
const PER_ROUND = Number(process.argv[3] ?? 2000)
const RUNS = 20
const STATES = 100
const SLS = ['base.packages', 'base.users', 'nginx', 'app.deploy', 'monitoring']

/** A realistic highstate return of STATES states: stable keys, mostly repeated comments, a few diffs and failures. */
function stateReturn(minion: string, run: number): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (let i = 0; i < STATES; i++) {
    const sls = SLS[i % SLS.length]!
    const kind = i % 3
    const id = `${sls.replace('.', '-')}-${i}`
    const key = kind === 0 ? `pkg_|-${id}_|-pkg${i}_|-installed` : kind === 1 ? `file_|-${id}_|-/etc/${sls}/f${i}.conf_|-managed` : `service_|-${id}_|-svc${i}_|-running`
    const changed = (i + run) % 20 === 0
    const failed = (i * 7 + run + minion.length) % 97 === 0
    out[key] = {
      __id__: id, __sls__: sls, __run_num__: i, name: kind === 1 ? `/etc/${sls}/f${i}.conf` : `pkg${i}`, duration: 1.25 + (i % 7),
      result: failed ? false : true, start_time: '08:00:00.000000',
      comment: failed ? `Service svc${i} failed to start on ${minion}` : kind === 0 ? `All specified packages are already installed` : kind === 1 ? (changed ? `File /etc/${sls}/f${i}.conf updated` : `File /etc/${sls}/f${i}.conf is in the correct state`) : `The service svc${i} is already running`,
      changes: changed ? { diff: `--- \n+++ \n@@ -1,2 +1,2 @@\n setting = 1\n-token = ${run - 1}-${minion}\n+token = ${run}-${minion}\n` } : {},
    }
  }
  return out
}

/** A data dir's service dependencies on a fresh SQLite file. */
function world(keep: number) {
  const dir = mkdtempSync(join(tmpdir(), 'sd-detail-'))
  const db = openDb(join(dir, 'saltdeck.db'))
  migrate(db)
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'))
  const deps: AppDeps = { db, config: loadConfig({}, { runDetailKeep: keep }), clock, log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) }
  return { dir, deps, clock }
}

let jidSeq = 0
const jid = (t: number) => new Date(t).toISOString().replace(/\D/g, '').slice(0, 17) + String(jidSeq++ % 1000).padStart(3, '0')
/** One minion's return as the stream delivers it. */
const ret = (clock: ManualClock, minion: string, fun: string, r: unknown): JobReturned => ({ jid: jid(clock.now()), minionId: minion, fun, ret: r, retcode: 0, success: true, ts: clock.now(), stampMs: clock.now(), funArgs: [] })

/** Bytes per table (dbstat) or the whole file. */
function sizes(deps: AppDeps) {
  deps.db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  try {
    const rows = deps.db.$client.query<{ name: string; bytes: number }, []>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all()
    return Object.fromEntries(rows.map((r) => [r.name, r.bytes])) as Record<string, number>
  } catch {
    return {} as Record<string, number>
  }
}
const sum = (s: Record<string, number>, re: RegExp) => Object.entries(s).filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0)

console.log(`# A. storage: ${RUNS} runs × ${STATES} states per minion, detail kept for 20 runs`)
console.log('| minions | runs | s to store | db bytes/run | run_details bytes/run | runs table bytes/run | idents+texts bytes | raw return JSON bytes/run |')
console.log('|---|---|---|---|---|---|---|---|')
for (const minions of SCALES) {
  const { dir, deps, clock } = world(20)
  let rawBytes = 0
  const t0 = performance.now()
  for (let r = 0; r < RUNS; r++) {
    clock.advance(3600_000)
    for (let m = 0; m < minions; m += 200) {
      const batch = []
      for (let i = m; i < Math.min(minions, m + 200); i++) {
        const id = `minion-${String(i).padStart(5, '0')}`
        const body = stateReturn(id, r)
        if (i < 50) rawBytes += JSON.stringify(body).length
        batch.push({ ...noFacts(), returns: [ret(clock, id, 'state.apply', body)] })
      }
      await applyFacts(deps, batch)
    }
  }
  const secs = (performance.now() - t0) / 1000
  const s = sizes(deps)
  const total = statSync(join(dir, 'saltdeck.db')).size
  const runs = minions * RUNS
  const per = (n: number) => Math.round(n / runs)
  console.log(`| ${minions.toLocaleString('en-US')} | ${runs.toLocaleString('en-US')} | ${secs.toFixed(1)} | ${per(total)} | ${per(sum(s, /^(run_details|sqlite_autoindex_run_details|run_details_minion)/))} | ${per(sum(s, /^(runs|runs_|sqlite_autoindex_runs)/))} | ${sum(s, /^(state_idents|state_texts|sqlite_autoindex_state|state_idents_key_sls|state_texts_text)/).toLocaleString('en-US')} | ${Math.round(rawBytes / (50 * RUNS))} |`)
  deps.db.$client.close()
  rmSync(dir, { recursive: true, force: true })
}

console.log(`\n# B. ingest: ${PER_ROUND} state-run returns (${STATES} states each) per round through applyFacts, batches of 200; 5 interleaved rounds`)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const rounds: Record<string, number[]> = { 'keep=20': [], 'keep=0': [], 'test.ping': [] }
const worlds = { 'keep=20': world(20), 'keep=0': world(0), 'test.ping': world(20) }
const bodies = Array.from({ length: 20 }, (_, r) => stateReturn('minion-x', r))
for (let round = 0; round < 5; round++) {
  for (const [name, w] of Object.entries(worlds)) {
    const t0 = performance.now()
    for (let m = 0; m < PER_ROUND; m += 200) {
      w.clock.advance(60_000)
      const batch = []
      for (let i = m; i < m + 200; i++) {
        const id = `minion-${String(i).padStart(5, '0')}`
        batch.push({ ...noFacts(), returns: [name === 'test.ping' ? ret(w.clock, id, 'test.ping', true) : ret(w.clock, id, 'state.apply', bodies[(round * 7 + i) % 20])] })
      }
      await applyFacts(w.deps, batch)
    }
    rounds[name]!.push(PER_ROUND / ((performance.now() - t0) / 1000))
  }
}
console.log('| returns | median returns/s | rounds | µs per return |')
console.log('|---|---|---|---|')
for (const [name, xs] of Object.entries(rounds)) console.log(`| ${name} | ${Math.round(median(xs)).toLocaleString('en-US')} | ${xs.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')} | ${Math.round(1e6 / median(xs))} |`)
console.log(`ratio keep=20 / keep=0: ${(median(rounds['keep=20']!) / median(rounds['keep=0']!)).toFixed(2)}`)
for (const w of Object.values(worlds)) (w.deps.db.$client.close(), rmSync(w.dir, { recursive: true, force: true }))
