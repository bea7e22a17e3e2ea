#!/usr/bin/env bun
/**
 * Measures the fixes suggested in RESULTS.md on a scratch copy of the seeded data (never touches saltdeck.db).
 *
 *   bun bench/whatif.ts --data-dir bench/data/fleet [--scratch bench/data/whatif.db]
 *
 * 1. runs: the list query with the current layout (rowid table in arrival order + runs_minion_time index) vs
 *    a covering index vs a WITHOUT ROWID table clustered by (minion_id, completed_at, jid), random minion ids,
 *    mmap off (the runs table of the seeded file lies beyond the service's 256 MB mmap window).
 * 2. activity search: the count(*) of LIKE over five columns vs an FTS5 trigram index (exact, same matches
 *    for patterns of 3+ characters).
 * 3. package list totals: count(*) on package_stats vs FTS5 trigram for q=, and the cost of a cached total.
 */
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve, dirname } from 'node:path'
import { parseFlags } from '../src/cli'

const F = parseFlags(process.argv.slice(2), [])
const DATA_DIR = resolve(F['data-dir'] ?? 'bench/data/fleet')
const SCRATCH = resolve(F.scratch ?? join(dirname(DATA_DIR), 'whatif.db'))
for (const f of [SCRATCH, SCRATCH + '-wal', SCRATCH + '-shm']) if (existsSync(f)) rmSync(f)

const db = new Database(SCRATCH, { create: true })
db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -1000000')
db.exec(`ATTACH '${join(DATA_DIR, 'saltdeck.db')}' AS src`)
const ids = readFileSync(join(DATA_DIR, 'minion-ids.txt'), 'utf8').split('\n').filter(Boolean)
const t = () => performance.now()
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `median ${s[Math.floor(s.length / 2)]!.toFixed(3)} ms, p99 ${s[Math.floor(s.length * 0.99)]!.toFixed(3)} ms`
}
const timeIt = (label: string, n: number, f: (i: number) => unknown) => {
  for (let i = 0; i < Math.min(n, 20); i++) f(i)
  const xs: number[] = []
  for (let i = 0; i < n; i++) {
    const s = t()
    f(i)
    xs.push(t() - s)
  }
  console.log(`  ${label.padEnd(58)} ${stats(xs)}`)
}

// ------------------------------------------------------------------------------------------------ runs
let s = t()
db.exec(`CREATE TABLE runs AS SELECT * FROM src.runs ORDER BY rowid`)
db.exec(`CREATE INDEX runs_minion_time ON runs (minion_id, completed_at, jid)`)
db.exec(`CREATE TABLE runs_wr (id TEXT NOT NULL, minion_id TEXT NOT NULL, jid TEXT NOT NULL, fun TEXT NOT NULL, completed_at INTEGER NOT NULL,
  pass_count INTEGER NOT NULL, fail_count INTEGER NOT NULL, change_count INTEGER NOT NULL, total_count INTEGER NOT NULL, duration_ms INTEGER NOT NULL,
  blocked INTEGER NOT NULL, status TEXT NOT NULL, PRIMARY KEY (minion_id, completed_at, jid)) WITHOUT ROWID`)
db.exec(`INSERT INTO runs_wr SELECT id, minion_id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status FROM runs ORDER BY rowid`)
db.exec(`CREATE TABLE runs_cov AS SELECT * FROM runs ORDER BY rowid`)
db.exec(`CREATE INDEX runs_cov_list ON runs_cov (minion_id, completed_at, jid, id, fun, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status)`)
console.log(`[whatif] copied runs (3 layouts) in ${((t() - s) / 1000).toFixed(1)} s`)
db.exec('PRAGMA mmap_size = 0; PRAGMA cache_size = -32000') // the service's cache size; no mmap reaches the runs pages
db.exec('DETACH src')
const LIST = 'id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status'
const rnd = (i: number) => ids[(i * 2654435761) % ids.length]!
console.log('runs list (count + newest 20) for random minions, cache 32 MB, no mmap:')
for (const table of ['runs', 'runs_cov', 'runs_wr']) {
  const c = db.query(`SELECT count(*) AS n FROM ${table} WHERE minion_id = ?1`)
  const q = db.query(`SELECT ${LIST} FROM ${table} WHERE minion_id = ?1 ORDER BY completed_at DESC, jid DESC LIMIT 20`)
  const plan = (db.query(`EXPLAIN QUERY PLAN SELECT ${LIST} FROM ${table} WHERE minion_id = ?1 ORDER BY completed_at DESC, jid DESC LIMIT 20`).all('x') as { detail: string }[]).map((p) => p.detail).join('; ')
  timeIt(`${table} [${plan}]`, 20_000, (i) => {
    c.get(rnd(i))
    q.all(rnd(i))
  })
}

// ------------------------------------------------------------------------------------------------ activity search
db.exec(`ATTACH '${join(DATA_DIR, 'saltdeck.db')}' AS src`)
db.exec('PRAGMA cache_size = -32000')
s = t()
db.exec(`CREATE TABLE ev AS SELECT id, ts, summary, minion_id, fun, initiator, target FROM src.activity_events ORDER BY id`)
db.exec(`CREATE VIRTUAL TABLE ev_fts USING fts5(summary, minion_id, fun, initiator, target, content='ev', content_rowid='id', tokenize='trigram')`)
db.exec(`INSERT INTO ev_fts (rowid, summary, minion_id, fun, initiator, target) SELECT id, summary, coalesce(minion_id, ''), coalesce(fun, ''), coalesce(initiator, ''), coalesce(target, '') FROM ev`)
console.log(`[whatif] FTS5 trigram over 5 columns of ${(db.query('SELECT count(*) AS n FROM ev').get() as { n: number }).n} events built in ${((t() - s) / 1000).toFixed(1)} s`)
const like = db.query(`SELECT count(*) AS n FROM src.activity_events WHERE (summary LIKE ?1 OR minion_id LIKE ?1 OR fun LIKE ?1 OR initiator LIKE ?1 OR target LIKE ?1)`)
const fts = db.query(`SELECT count(*) AS n FROM ev_fts WHERE ev_fts MATCH ?1`)
const newer = db.query(`SELECT count(*) AS n FROM src.activity_events WHERE id > ?1 AND (summary LIKE ?2 OR minion_id LIKE ?2 OR fun LIKE ?2 OR initiator LIKE ?2 OR target LIKE ?2)`)
const maxId = (db.query('SELECT max(id) AS m FROM src.activity_events').get() as { m: number }).m
console.log('activity search totals:')
for (const term of ['web', 'state.apply', 'db-0001']) {
  const a = (like.get(`%${term}%`) as { n: number }).n
  const b = (fts.get(`"${term}"`) as { n: number }).n
  console.log(`  "${term}": LIKE count ${a}, FTS count ${b}${a === b ? ' (equal)' : ' (DIFFERENT)'}`)
  timeIt(`  count(*) LIKE over 5 columns, "${term}"`, 5, () => like.get(`%${term}%`))
  timeIt(`  count(*) FTS5 trigram MATCH, "${term}"`, 20, () => fts.get(`"${term}"`))
  timeIt(`  cached total + count(id > cached max id), "${term}"`, 200, () => newer.get(maxId - 50, `%${term}%`))
}

// ------------------------------------------------------------------------------------------------ packages
s = t()
db.exec(`CREATE TABLE ps AS SELECT * FROM src.package_stats`)
db.exec(`CREATE VIRTUAL TABLE ps_fts USING fts5(name, source UNINDEXED, tokenize='trigram')`)
db.exec(`INSERT INTO ps_fts (rowid, name, source) SELECT rowid, name, source FROM ps`)
console.log(`[whatif] FTS5 trigram over package names built in ${((t() - s) / 1000).toFixed(1)} s`)
const names = (db.query(`SELECT name FROM src.package_stats WHERE source = ''`).values() as string[][]).map((r) => r[0]!)
console.log('package list totals (source = \'\'):')
timeIt(`count(*) FROM package_stats WHERE source = ''`, 500, () => db.query(`SELECT count(*) FROM src.package_stats WHERE source = ''`).get())
timeIt(`count(*) … AND name LIKE '%lib%'`, 500, () => db.query(`SELECT count(*) FROM src.package_stats WHERE source = '' AND name LIKE '%lib%'`).get())
timeIt(`count(*) FTS5 trigram MATCH "lib" AND source = ''`, 500, () => db.query(`SELECT count(*) FROM ps_fts WHERE ps_fts MATCH '"lib"' AND source = ''`).get())
timeIt(`in-memory: names.filter(n => n.includes('lib')).length`, 500, () => names.filter((n) => n.includes('lib')).length)
db.close()
rmSync(SCRATCH, { force: true })
