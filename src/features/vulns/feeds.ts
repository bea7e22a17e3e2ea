/**
 * Importing OSV feeds. Records are read one at a time into staging tables (feed-staging.ts: on SQLite a scratch
 * database file of the import's staging directory, attached as `vstage`; on PostgreSQL temporary tables; neither the
 * feed nor what is staged of it sits in memory), then one transaction replaces the ecosystems the import names and re-matches only the packages those ecosystems name; the
 * counts follow (recountOutside). A broken file stops the import before that: nothing changes.
 */
import type { AppDeps } from '../../deps'
import { twin, type Engine, type Queryable } from '../../db/engine'
import { Conflict } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { makeStagingDir } from './staging'
import { FeedError, type RawRecord } from './osv-read'
import { fixedVersions, readRecord } from './records'
import { bumpGeneration, matchKeys, recountOutside } from './findings'
import type { RangeEvent } from './ranges'
import type { FeedStaging, StagingRun, StagingTables } from './feed-staging'
import { sqliteStaging } from './feed-staging-sqlite'
import { postgresStaging } from './feed-staging-postgres'
import { Pipeline, type Prepared } from '../../db/prepared'
import { postgresDescribe, postgresEntriesOf, postgresStageBatch, type StagedBatch, type StagedEntry, type StagedRecord } from './feed-writes-postgres'
import { CHUNK } from './findings-postgres'
import { clearMatches, describeStatements, putFeed, replaceEntries, stagedEcosystems, stagingWrites, touchedRecords, type DescribedEntry } from './feed-store'

/** The staging of the engine `db` runs on. */
const stagingFor = (db: Engine): FeedStaging => twin(db, { sqlite: sqliteStaging, postgres: postgresStaging })

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
  const db = deps.db
  let own: string | null = null
  try {
    if (!dir) own = makeStagingDir(deps.config.dataDir)
    const t0 = performance.now()
    let t1 = t0
    const { counts, feeds } = await stagingFor(db).run(db, join(dir ?? own!, 'stage.db'), async (s) => {
      const counts = await stage(s, records)
      if (!counts.read) throw new FeedError(`${source}: no OSV records found`)
      t1 = performance.now()
      lastApply.read_ms = Math.round(t1 - t0)
      return { counts, feeds: await s.replace((tx) => apply(tx, s.tables, source, deps.clock.now())) }
    })
    // The counts follow in their own short write (read first without the lock): see recountOutside.
    const tr = performance.now()
    const rc = await recountOutside(db)
    lastApply.recount_ms = Math.round(performance.now() - tr)
    // How long the write lock was held: the replacing transaction and the counts' write.
    lastApply.locked_ms = Math.round(tr - t1 + rc.writeMs)
    const ms = (t: number) => Math.round(performance.now() - t)
    deps.log.info('vulnerability feed imported', { source, records: counts.stored, skipped: counts.skipped, withdrawn: counts.withdrawn, apply_ms: ms(t1), ...lastApply })
    return { records: counts.stored, skipped: counts.skipped, withdrawn: counts.withdrawn, feeds }
  } finally {
    if (own) rmSync(own, { recursive: true, force: true })
    running = false
  }
}

/** Reads every record into the staging tables, a batch per staging step; the last record of an id wins. */
async function stage(s: StagingRun, records: AsyncIterable<RawRecord> | Iterable<RawRecord>) {
  const t = s.tables
  const counts = { read: 0, stored: 0, skipped: 0, withdrawn: 0 }
  // An id seen twice (two files of one import) drops its earlier entries; the set spares a delete per record.
  const seen = new Set<string>()
  let batch: RawRecord[] = []
  let batchBytes = 0
  // Prepared once per import, at the first batch: SQLite's statements belong to its one connection, and PostgreSQL's
  // staging batches are steps of one transaction.
  let st: ReturnType<typeof stagingWrites> | null = null
  const flush = (rs: RawRecord[]) => s.batch(async (tx) => {
    // PostgreSQL: the batch's rows in a few statements rather than a round trip each.
    if (tx.engine === 'postgres') return postgresStageBatch(tx, t, collectBatch(rs, counts, seen))
    st ??= stagingWrites(tx, t)
    // Written through a pipeline: on SQLite the loop stays synchronous, on PostgreSQL the batch's inserts queue.
    const p = new Pipeline()
    stageBatch(rs, st, p, counts, seen)
    await p.drain()
  })
  try {
    for await (const raw of records) {
      batch.push(raw)
      batchBytes += raw.bytes ?? 0
      if (batch.length >= STAGE_BATCH || batchBytes >= STAGE_BATCH_BYTES) await flush(batch), (batch = []), (batchBytes = 0)
    }
    if (batch.length) await flush(batch)
  } finally {
    const made = st as ReturnType<typeof stagingWrites> | null
    if (made) for (const q of Object.values(made)) q.finalize()
  }
  return counts
}

/** Stages one batch of records (a synchronous loop: kept out of the async function around it, which costs loops). */
function stageBatch(rs: RawRecord[], st: Record<'rec' | 'dropAff' | 'aff' | 'gone', Prepared>, p: Pipeline, counts: { read: number; stored: number; skipped: number; withdrawn: number }, seen: Set<string>) {
  for (const raw of rs) {
    const r = readRecord(raw.from, raw.value)
    counts.read++
    if ('skipped' in r) {
      if (r.skipped === 'withdrawn') counts.withdrawn++, p.add(st.gone.write((raw.value as { id: string }).id))
      else counts.skipped++
      continue
    }
    const v = r.record
    counts.stored++
    p.add(st.rec.write(v.id, JSON.stringify(v.aliases), v.summary, v.details, v.severity, v.score, v.published, v.modified))
    if (seen.has(v.id)) p.add(st.dropAff.write(v.id))
    else seen.add(v.id)
    for (const a of v.affected) p.add(st.aff.write(a.ecosystem, a.package, v.id, JSON.stringify(a.ranges), JSON.stringify(a.versions)))
  }
}

/**
 * One batch of records as rows, each once (stageBatch's statements in the order they would run): a record named again
 * replaces its row and its entries, those of this batch dropped here, those of an earlier batch by `dropEntriesOf`.
 */
function collectBatch(rs: RawRecord[], counts: { read: number; stored: number; skipped: number; withdrawn: number }, seen: Set<string>): StagedBatch {
  const before = new Set<string>()
  const recs = new Map<string, StagedRecord>()
  const entries = new Map<string, StagedEntry[]>()
  const withdrawn = new Set<string>()
  for (const raw of rs) {
    const r = readRecord(raw.from, raw.value)
    counts.read++
    if ('skipped' in r) {
      if (r.skipped === 'withdrawn') counts.withdrawn++, withdrawn.add((raw.value as { id: string }).id)
      else counts.skipped++
      continue
    }
    const v = r.record
    counts.stored++
    recs.set(v.id, { id: v.id, aliases: JSON.stringify(v.aliases), summary: v.summary, details: v.details, severity: v.severity, score: v.score ?? null, published: v.published ?? null, modified: v.modified ?? null })
    if (seen.has(v.id) && !entries.has(v.id)) before.add(v.id)
    seen.add(v.id)
    // Keyed by (ecosystem, package): the last entry of a pair wins, as the upsert would leave it.
    const mine = new Map<string, StagedEntry>()
    for (const a of v.affected) mine.set(`${a.ecosystem}\0${a.package}`, { ecosystem: a.ecosystem, package: a.package, vuln_id: v.id, ranges: JSON.stringify(a.ranges), versions: JSON.stringify(a.versions) })
    entries.set(v.id, [...mine.values()])
  }
  return { dropEntriesOf: [...before], records: [...recs.values()], entries: [...entries.values()].flat(), withdrawn: [...withdrawn] }
}

/** Replaces the staged ecosystems' records, re-matches the packages they name, recounts; returns those feeds. */
async function apply(tx: Queryable, t: StagingTables, source: string, now: number): Promise<ImportResult['feeds']> {
  const ecos = await stagedEcosystems(tx, t)
  const ecoJson = JSON.stringify(ecos)
  await replaceEntries(tx, t, ecoJson)
  await describeTouched(tx, t)
  // Every match in these ecosystems is made again from the new entries, for the keys of the packages they name.
  const keyIds = await clearMatches(tx, t, ecoJson)
  const tm = performance.now()
  await matchKeys(tx, keyIds, new Set(ecos))
  await bumpGeneration(tx)
  lastApply.match_ms = Math.round(performance.now() - tm)
  const n = new Map<string, number>()
  for (const e of ecos) n.set(e, await putFeed(tx, e, now, source))
  return ecos.sort().map((e) => ({ ecosystem: e, records: n.get(e)!, imported_at: iso(now), source }))
}

/** Rewrites the package list and fixed versions of every touched record from its entries over all ecosystems. */
async function describeTouched(tx: Queryable, t: StagingTables) {
  const ids = await touchedRecords(tx, t)
  if (tx.engine === 'postgres') return describePostgres(tx, ids)
  const { entries, put } = describeStatements(tx)
  const p = new Pipeline()
  for (const id of ids) {
    const got = entries.all<DescribedEntry>(id)
    const rows = got instanceof Promise ? await got : got
    p.add(put.write(id, ...describe(rows)))
  }
  await p.drain()
}

/** A record's package list and fixed versions (JSON) from its entries. */
function describe(rows: DescribedEntry[]): [string, string] {
  const ranges = rows.map((r) => ({ ranges: JSON.parse(r.ranges) as RangeEvent[][] }))
  return [JSON.stringify([...new Set(rows.map((r) => r.package))]), JSON.stringify(fixedVersions(ranges))]
}

/** describeTouched on PostgreSQL: a chunk of records' entries read at once, their descriptions written at once. */
async function describePostgres(tx: Queryable, ids: string[]) {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK)
    const byId = new Map<string, DescribedEntry[]>(chunk.map((id) => [id, []]))
    for (const r of await postgresEntriesOf(tx, chunk)) byId.get(r.vuln_id)!.push(r)
    await postgresDescribe(tx, [...byId].map(([id, rows]) => {
      const [p, f] = describe(rows)
      return { id, p, f }
    }))
  }
}
