/**
 * Importing OSV feeds. Records are read one at a time into staging tables in a scratch database file of the import's
 * staging directory, attached as `vstage` (neither the feed nor what is staged of it sits in memory), then one
 * transaction replaces the ecosystems the import names and re-matches only the packages those ecosystems name; the
 * counts follow (recountOutside). A broken file stops the import before that: nothing changes.
 */
import type { Database } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { Conflict } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { makeStagingDir } from './staging'
import { FeedError, type RawRecord } from './osv-read'
import { fixedVersions, readRecord } from './records'
import { bumpGeneration, matchKeys, recountOutside } from './findings'
import type { RangeEvent } from './ranges'

/** What an import did. */
export interface ImportResult {
  records: number
  skipped: number
  withdrawn: number
  feeds: { ecosystem: string; records: number; imported_at: string; source: string }[]
}

/** Records staged per transaction while reading. */
const STAGE_BATCH = 500
/** Bytes of JSON text whose parsed records may wait for one staging transaction (a few large records flush alone). */
const STAGE_BATCH_BYTES = 4 * 1024 * 1024

let running = false

/** How the last import's transaction spent its time (logged, and read by the benchmark). */
export const lastApply = { read_ms: 0, match_ms: 0, recount_ms: 0, locked_ms: 0 }

/**
 * Imports the records an iterator yields (from files or a request body), naming the import `source`. The staging
 * database goes in `dir` (an upload's staging directory, which its caller removes), else in a directory of its own.
 */
export async function importFeed(deps: AppDeps, records: AsyncIterable<RawRecord> | Iterable<RawRecord>, source: string, dir?: string): Promise<ImportResult> {
  if (running) throw new Conflict('Vulnerability import already running')
  running = true
  const db = deps.db.$client
  let own: string | null = null
  try {
    if (!dir) own = makeStagingDir(deps.config.dataDir)
    stageTables(db, join(dir ?? own!, 'stage.db'))
    const t0 = performance.now()
    const counts = await stage(db, records)
    if (!counts.read) throw new FeedError(`${source}: no OSV records found`)
    const t1 = performance.now()
    lastApply.read_ms = Math.round(t1 - t0)
    const feeds = db.transaction(() => apply(db, source, deps.clock.now()))()
    // The counts follow in their own short write (read first without the lock): see recountOutside.
    const tr = performance.now()
    const rc = recountOutside(db)
    lastApply.recount_ms = Math.round(performance.now() - tr)
    // How long the write lock was held: the replacing transaction and the counts' write.
    lastApply.locked_ms = Math.round(tr - t1 + rc.writeMs)
    const ms = (t: number) => Math.round(performance.now() - t)
    deps.log.info('vulnerability feed imported', { source, records: counts.stored, skipped: counts.skipped, withdrawn: counts.withdrawn, apply_ms: ms(t1), ...lastApply })
    return { records: counts.stored, skipped: counts.skipped, withdrawn: counts.withdrawn, feeds }
  } finally {
    detachStaging(db)
    if (own) rmSync(own, { recursive: true, force: true })
    running = false
  }
}

/** Detaches the staging database when it is attached (after an import, and before one in case a failure left it). */
function detachStaging(db: Database) {
  if (db.query<{ name: string }, []>('PRAGMA database_list').all().some((d) => d.name === 'vstage')) db.run('DETACH DATABASE vstage')
}

/**
 * Attaches a new staging database at `file` and creates its empty tables. On disk, not in the connection's temp store
 * (which is memory): a feed's records staged in memory held their whole size (issue 20: 1.9 GB from one zip). It is
 * scratch, thrown away with its directory, so it keeps no journal and never syncs.
 */
function stageTables(db: Database, file: string) {
  detachStaging(db)
  db.run('ATTACH DATABASE ?1 AS vstage', [file])
  db.run('PRAGMA vstage.journal_mode = OFF')
  db.run('PRAGMA vstage.synchronous = OFF')
  db.run('PRAGMA vstage.cache_size = -4000')
  db.run(`CREATE TABLE vstage.vuln_stage_records (id TEXT PRIMARY KEY, aliases TEXT, summary TEXT, details TEXT, severity TEXT, score REAL,
    published TEXT, modified TEXT)`)
  db.run('CREATE TABLE vstage.vuln_stage_affected (ecosystem TEXT, package TEXT, vuln_id TEXT, ranges TEXT, versions TEXT, PRIMARY KEY (ecosystem, package, vuln_id))')
  db.run('CREATE INDEX vstage.vuln_stage_affected_vuln ON vuln_stage_affected (vuln_id)')
  db.run('CREATE TABLE vstage.vuln_stage_withdrawn (id TEXT PRIMARY KEY)')
}

/** Reads every record into the staging tables, a batch per transaction; the last record of an id wins. */
async function stage(db: Database, records: AsyncIterable<RawRecord> | Iterable<RawRecord>) {
  // Prepared, not cached: the statements go with the staging database when it is detached.
  const rec = db.prepare(`INSERT OR REPLACE INTO vstage.vuln_stage_records VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`)
  const dropAff = db.prepare('DELETE FROM vstage.vuln_stage_affected WHERE vuln_id = ?1')
  const aff = db.prepare('INSERT OR REPLACE INTO vstage.vuln_stage_affected VALUES (?1, ?2, ?3, ?4, ?5)')
  const gone = db.prepare('INSERT OR IGNORE INTO vstage.vuln_stage_withdrawn VALUES (?1)')
  const counts = { read: 0, stored: 0, skipped: 0, withdrawn: 0 }
  // An id seen twice (two files of one import) drops its earlier entries; the set spares a delete per record.
  const seen = new Set<string>()
  let batch: RawRecord[] = []
  let batchBytes = 0
  const flush = db.transaction((rs: RawRecord[]) => {
    for (const raw of rs) {
      const r = readRecord(raw.from, raw.value)
      counts.read++
      if ('skipped' in r) {
        if (r.skipped === 'withdrawn') counts.withdrawn++, gone.run((raw.value as { id: string }).id)
        else counts.skipped++
        continue
      }
      const v = r.record
      counts.stored++
      rec.run(v.id, JSON.stringify(v.aliases), v.summary, v.details, v.severity, v.score, v.published, v.modified)
      if (seen.has(v.id)) dropAff.run(v.id)
      else seen.add(v.id)
      for (const a of v.affected) aff.run(a.ecosystem, a.package, v.id, JSON.stringify(a.ranges), JSON.stringify(a.versions))
    }
  })
  try {
    for await (const raw of records) {
      batch.push(raw)
      batchBytes += raw.bytes ?? 0
      if (batch.length >= STAGE_BATCH || batchBytes >= STAGE_BATCH_BYTES) flush(batch), (batch = []), (batchBytes = 0)
    }
    if (batch.length) flush(batch)
  } finally {
    for (const q of [rec, dropAff, aff, gone]) q.finalize()
  }
  return counts
}

/** Replaces the staged ecosystems' records, re-matches the packages they name, recounts; returns those feeds. */
function apply(db: Database, source: string, now: number): ImportResult['feeds'] {
  const ecos = db.query<{ e: string }, []>('SELECT DISTINCT ecosystem AS e FROM vstage.vuln_stage_affected').all().map((r) => r.e)
  const ecoJson = JSON.stringify(ecos)
  const inEcos = 'ecosystem IN (SELECT value FROM json_each(?1))'
  // Records whose entries change: they had entries in these ecosystems, are in the import, or were withdrawn.
  db.run('CREATE TEMP TABLE IF NOT EXISTS vuln_touched (id TEXT PRIMARY KEY)')
  db.run('DELETE FROM temp.vuln_touched')
  db.query(`INSERT OR IGNORE INTO temp.vuln_touched SELECT DISTINCT vuln_id FROM vuln_affected WHERE ${inEcos}`).run(ecoJson)
  db.run('INSERT OR IGNORE INTO temp.vuln_touched SELECT id FROM vstage.vuln_stage_records UNION SELECT id FROM vstage.vuln_stage_withdrawn')
  db.query(`DELETE FROM vuln_affected WHERE ${inEcos}`).run(ecoJson)
  db.run('DELETE FROM vuln_affected WHERE vuln_id IN (SELECT id FROM vstage.vuln_stage_withdrawn)')
  db.run('INSERT INTO vuln_affected (ecosystem, package, vuln_id, ranges, versions) SELECT ecosystem, package, vuln_id, ranges, versions FROM vstage.vuln_stage_affected')
  db.run(`INSERT INTO vuln_records (id, aliases, summary, details, severity, score, published, modified, packages, fixed_versions)
    SELECT id, aliases, summary, details, severity, score, published, modified, '[]', '[]' FROM vstage.vuln_stage_records WHERE true
    ON CONFLICT (id) DO UPDATE SET aliases = excluded.aliases, summary = excluded.summary, details = excluded.details, severity = excluded.severity,
      score = excluded.score, published = excluded.published, modified = excluded.modified`)
  db.run('DELETE FROM vuln_records WHERE id IN (SELECT id FROM temp.vuln_touched) AND id NOT IN (SELECT vuln_id FROM vuln_affected)')
  describeTouched(db)
  // Every match in these ecosystems is made again from the new entries, for the keys of the packages they name.
  db.query(`DELETE FROM vuln_matches WHERE ${inEcos}`).run(ecoJson)
  db.run('DELETE FROM vuln_matches WHERE vuln_id IN (SELECT id FROM vstage.vuln_stage_withdrawn)')
  const keys = db.query<{ id: number }, [string]>(`SELECT k.id FROM package_keys k WHERE coalesce(k.source_name, k.name) IN
    (SELECT DISTINCT package FROM vuln_affected WHERE ${inEcos})`).all(ecoJson).map((r) => r.id)
  const tm = performance.now()
  matchKeys(db, keys, new Set(ecos))
  bumpGeneration(db)
  lastApply.match_ms = Math.round(performance.now() - tm)
  const put = db.query(`INSERT INTO vuln_feeds (ecosystem, records, imported_at, source) VALUES (?1, ?2, ?3, ?4)
    ON CONFLICT (ecosystem) DO UPDATE SET records = excluded.records, imported_at = excluded.imported_at, source = excluded.source`)
  const n = db.query<{ n: number }, [string]>('SELECT count(DISTINCT vuln_id) AS n FROM vuln_affected WHERE ecosystem = ?1')
  for (const e of ecos) put.run(e, n.get(e)!.n, now, source)
  return ecos.sort().map((e) => ({ ecosystem: e, records: n.get(e)!.n, imported_at: iso(now), source }))
}

/** Rewrites the package list and fixed versions of every touched record from its entries over all ecosystems. */
function describeTouched(db: Database) {
  const entries = db.query<{ package: string; ranges: string }, [string]>('SELECT package, ranges FROM vuln_affected WHERE vuln_id = ?1 ORDER BY ecosystem, package')
  const put = db.query('UPDATE vuln_records SET packages = ?2, fixed_versions = ?3 WHERE id = ?1')
  for (const { id } of db.query<{ id: string }, []>('SELECT id FROM temp.vuln_touched WHERE id IN (SELECT id FROM vuln_records)').all()) {
    const rows = entries.all(id)
    const ranges = rows.map((r) => ({ ranges: JSON.parse(r.ranges) as RangeEvent[][] }))
    put.run(id, JSON.stringify([...new Set(rows.map((r) => r.package))]), JSON.stringify(fixedVersions(ranges)))
  }
}
