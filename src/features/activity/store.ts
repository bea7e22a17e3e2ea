/**
 * The activity feed's SQL: events and their per-category counters, the filter of the list and the stream as one WHERE
 * clause, and the search (LIKE, or PostgreSQL's ILIKE, decides; SQLite narrows it by the FTS5 trigram index of search.db,
 * PostgreSQL by the pg_trgm index of activity_search: search-index-*.ts). Everything runs on the Queryable it is handed (the engine or an open transaction).
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import { twin, type Engine, type Queryable } from '../../db/engine'
import { untilCommit, untilCommitBy } from '../../db/until-commit'
import type { Row } from '../../db/row'
import { activityCounts, activityEvents as ev } from '../../db/schema'
import { containsPattern } from '../../lib/sql'
import { insertEventsSqlite, type EventValues } from './events-sqlite'
import { insertEventsPostgres } from './events-postgres'
import { searchCandidates, SEARCH_QUEUE, SEARCH_TABLE } from './search-index-postgres'
import { sourceColumn } from '../salt-sources/store'

/**
 * A row of activity_events as the list and the stream read it: `source` null for the default source (salt-sources/store.ts sourceColumn).
 */
export type EventRow = Omit<Row<typeof ev>, 'source'> & { source: string | null }

export type { EventValues }

/** The columns a list reads (the source null for the default: salt-sources/store.ts sourceColumn). */
const COLS = sql`${ev.id}, ${ev.ts}, ${ev.category}, ${ev.eventType}, ${ev.minionId}, ${ev.jid}, ${ev.fun}, ${ev.success}, ${ev.changed}, ${ev.initiator}, ${ev.target}, ${ev.durationMs}, ${ev.summary}, ${sourceColumn(ev.source)}`

/**
 * Inserts events in order and adds them to their categories' counters; returns their ids. SQLite: one prepared
 * statement run per event (events-sqlite.ts: its row id costs nothing, RETURNING several times more per row);
 * PostgreSQL: a JSON row set per 2,000 events, queued for the search index in the same statement (events-postgres.ts).
 */
export async function insertEvents(q: Queryable, rows: EventValues[], perCategory: Map<string, number>): Promise<number[]> {
  const ids = q.native.engine === 'sqlite' ? insertEventsSqlite(q.native.client, rows) : await insertEventsPostgres(q, rows)
  for (const [c, n] of perCategory)
    await q.exec(sql`INSERT INTO ${activityCounts} (category, n) VALUES (${c}, ${n}) ON CONFLICT (category) DO UPDATE SET n = ${activityCounts.n} + excluded.n`)
  return ids
}

/** Whether a minion.start of this minion is stored with from < ts < to. */
export async function startBetween(q: Queryable, minionId: string, from: number, to: number): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS n FROM ${ev} WHERE ${ev.minionId} = ${minionId} AND ${ev.ts} > ${from} AND ${ev.ts} < ${to} AND ${ev.eventType} = 'minion.start' LIMIT 1`))
}

/** The newest event id, 0 when there is none. */
export async function maxEventId(q: Queryable): Promise<number> {
  return (await q.row<{ id: number | null }>(sql`SELECT max(${ev.id}) AS id FROM ${ev}`))?.id ?? 0
}

/** The newest event id as a list reads it: kept until the next commit. */
const newestEventId = untilCommit(maxEventId)

/**
 * PostgreSQL's column of the transaction that inserted each event (xid8, a PostgreSQL-only column: drizzle-pg/0006).
 * Ids come from a sequence there, and concurrent transactions commit out of id order; transaction ids below the
 * oldest one still open (pg_snapshot_xmin) all belong to ended transactions, so the events under that horizon never
 * change but by retention.
 */
const XID = sql.raw('"xid"')
/** The horizon of a PostgreSQL statement: the oldest transaction still open, as text (an xid8). */
const HORIZON = sql`pg_snapshot_xmin(pg_current_snapshot())`

/**
 * Where a kept total stands now, and how many events matching `conds` it does not count yet. SQLite: the newest id
 * (one writer, ids committed in order), none beyond it. PostgreSQL: the horizon as a number (xid8 values stay far
 * below 2^53), under which no event will appear any more, and the committed events at or past it (a few, but for a
 * long transaction's minutes).
 */
export async function countedTop(q: Engine, conds: SQL[]): Promise<{ top: number; beyond: number }> {
  if (q.engine === 'sqlite') return { top: await newestEventId(q), beyond: 0 }
  // The horizon first, then the count with it bound. In one statement the horizon was a subquery whose value the
  // planner could not see: it took a third of the table to match and scanned all of it on every filtered list
  // (bench/RESULTS.md, session 12); bound, the (xid, id) index finds the few events past it. Every event under the
  // horizon is committed already, so a later snapshot for the count changes nothing the kept total holds.
  const h = (await q.row<{ h: string }>(sql`SELECT ${HORIZON}::text AS h`))!.h
  const r = await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${ev}${whereOf([...conds, sql`${XID} >= ${h}::xid8`])}`)
  return { top: Number(h), beyond: Number(r!.n) }
}

/** The events a total kept at `top` counts: SQLite `id <= top` in a form no index is chosen for (unary plus); PostgreSQL those inserted under the horizon `top`. */
export const seenBy = (q: Queryable, top: number) => twin(q, { sqlite: sql`+${ev.id} <= ${top}`, postgres: sql`${XID} < ${String(top)}::xid8` })
/** The events a total kept at `top` counts and one kept at `from` does not. */
export const seenBetween = (q: Queryable, from: number, top: number) =>
  twin(q, { sqlite: sql`${ev.id} > ${from} AND ${ev.id} <= ${top}`, postgres: sql`${XID} >= ${String(from)}::xid8 AND ${XID} < ${String(top)}::xid8` })

/**
 * Where a live stream stands: after the event `id` (SQLite), or after (xid, id) in PostgreSQL's (xid, id) order
 * (`xid` the xid8 as text). The SSE id a client sees is the event id alone; `cursorAt` finds its xid again.
 */
export interface StreamCursor {
  id: number
  xid: string | null
}

/** A stream's cursor after the event `id` (Last-Event-ID, after_id), or after everything stored now when `id` is null. */
export async function cursorAt(q: Queryable, id: number | null): Promise<StreamCursor> {
  if (q.engine === 'sqlite') return { id: id ?? (await maxEventId(q)), xid: null }
  // A new stream: every event at or past the horizon is still to come (its transaction open, or ended after it).
  const start = async (): Promise<StreamCursor> => ({ id: 0, xid: (await q.row<{ h: string }>(sql`SELECT ${HORIZON}::text AS h`))!.h })
  if (id === null) return start()
  const at = await q.row<{ xid: string }>(sql`SELECT ${XID}::text AS xid FROM ${ev} WHERE ${ev.id} = ${id}`)
  if (at) return { id, xid: at.xid }
  // The event is gone (retention) or never was: from the oldest transaction of the events after it (a few stored
  // beside them may come again: at least once), or as a new stream when there are none.
  const after = await q.row<{ xid: string | null }>(sql`SELECT min(${XID})::text AS xid FROM ${ev} WHERE ${ev.id} > ${id}`)
  return after?.xid ? { id: 0, xid: after.xid } : start()
}

/** What a stream read gives: the events it may deliver, the cursor after them, and whether more are waiting. */
export interface StreamRead {
  rows: EventRow[]
  next: StreamCursor
  /** A full page was read: read again at once. */
  more: boolean
  /** Committed events past PostgreSQL's horizon wait for an older transaction still open: read again soon. */
  held: boolean
}

/**
 * The events matching `conds` after `cursor`, at most `limit`. SQLite: in id order. PostgreSQL: in (xid, id) order and
 * only under the statement's horizon, so an event committed later never sorts before one already delivered.
 */
export async function eventsAfterCursor(q: Queryable, conds: SQL[], cursor: StreamCursor, limit: number): Promise<StreamRead> {
  if (q.engine === 'sqlite') {
    const rows = await eventsInIdOrder(q, [...conds, sql`${ev.id} > ${cursor.id}`], limit)
    return { rows, next: rows.length ? { id: rows.at(-1)!.id, xid: null } : cursor, more: rows.length === limit, held: false }
  }
  const got = await q.rows<EventRow & { xid: string; horizon: string }>(sql`SELECT ${COLS}, ${XID}::text AS xid, (SELECT ${HORIZON})::text AS horizon
    FROM ${ev}${whereOf([...conds, sql`(${XID}, ${ev.id}) > (${cursor.xid ?? '0'}::xid8, ${cursor.id})`])} ORDER BY ${XID}, ${ev.id} LIMIT ${limitOf(limit)}`)
  const horizon = got.length ? BigInt(got[0]!.horizon) : 0n
  const ready = got.filter((r) => BigInt(r.xid) < horizon)
  const last = ready.at(-1)
  const rows = ready.map(({ xid: _x, horizon: _h, ...r }) => r as EventRow)
  return { rows, next: last ? { id: last.id, xid: last.xid } : cursor, more: got.length === limit && ready.length === got.length, held: ready.length < got.length }
}

/** The events with ids in the inclusive runs `runs`, in id order. */
export function eventsInRuns(q: Queryable, runs: [number, number][]): Promise<EventRow[]> {
  const n = runs.reduce((s, [a, b]) => s + b - a + 1, 0)
  return eventsInIdOrder(q, [sql`(${sql.join(runs.map(([a, b]) => sql`${ev.id} BETWEEN ${a} AND ${b}`), sql` OR `)})`], n)
}

/** Deletes the events before `cutoff` and takes them off their counters; returns how many went. Run it in a tx. */
export async function deleteEventsBefore(q: Queryable, cutoff: number): Promise<number> {
  const gone = await twin(q, {
    sqlite: async () => {
      const counts = await q.rows<{ category: string; n: number }>(sql`SELECT ${ev.category} AS category, count(*) AS n FROM ${ev} WHERE ${ev.ts} < ${cutoff} GROUP BY ${ev.category}`)
      // search.db drops pruned events at its next step (search-index-sqlite.ts).
      await q.exec(sql`DELETE FROM ${ev} WHERE ${ev.ts} < ${cutoff}`)
      return counts
    },
    // One statement: the events, their search rows and any still queued go together.
    postgres: () => q.rows<{ category: string; n: number }>(sql`WITH gone AS (DELETE FROM ${ev} WHERE ${ev.ts} < ${cutoff} RETURNING ${ev.id} AS id, ${ev.category} AS category),
        searched AS (DELETE FROM ${SEARCH_TABLE} WHERE id IN (SELECT id FROM gone)),
        queued AS (DELETE FROM ${SEARCH_QUEUE} WHERE id IN (SELECT id FROM gone))
      SELECT category, count(*) AS n FROM gone GROUP BY category`),
  })()
  let removed = 0
  for (const g of gone) {
    await q.exec(sql`UPDATE ${activityCounts} SET n = n - ${g.n} WHERE ${activityCounts.category} = ${g.category}`)
    removed += g.n
  }
  return removed
}

/** The sum of the counters of these categories (all when none given): an unfiltered total without count(*). Kept until the next commit. */
export function countedIn(db: Engine, cats: string[] | null): Promise<number> {
  return keptCategoryTotal(db, cats === null ? null : cats.join('\0'))
}

/** Category totals by their categories joined with NUL (null: all), kept until the next commit. */
const keptCategoryTotal = untilCommitBy(async (db, key: string | null) => {
  const w = key === null ? sql.empty() : sql` WHERE ${activityCounts.category} IN ${key.split('\0')}`
  return (await db.row<{ n: number }>(sql`SELECT coalesce(sum(${activityCounts.n}), 0) AS n FROM ${activityCounts}${w}`))!.n
})

/** The filters of the list and the stream as conditions; `cats`: the categories asked and visible (all: none named). */
export interface Where {
  conds: SQL[]
  /** The categories it keeps, when fewer than all (the category condition is conds[0] then). */
  cats: string[] | null
  /** Whether it filters by category alone (or not at all). */
  onlyCategories: boolean
}

/** What eventWhere reads of a filter (contract §6), `since` already turned into a time. */
export interface WhereFilter {
  since?: number
  event_type?: string
  minion_id?: string
  /** A case-sensitive substring of minion_id. */
  minion?: string
  jid?: string
  search?: string
  hide_dispatch?: boolean
  hide_routine?: boolean
  /** Only events with this outcome (an event without one matches neither). */
  success?: boolean
  /** Only events that came through this salt source. */
  source?: string
}

/** The columns the activity search looks in. */
const SEARCHED = [ev.summary, ev.minionId, ev.fun, ev.initiator, ev.target]

/**
 * The conditions of a filter over the categories `cats` (`all`: whether those are every category). With `scan`, a
 * search is decided by LIKE alone (for a few rows: the newest, or those stored since a count); without, the engine's
 * trigram index first narrows the rows (SQLite's search.db, PostgreSQL's activity_search).
 */
export function eventWhere(q: Queryable, f: WhereFilter, cats: string[], all: boolean, scan = false): Where {
  const conds: SQL[] = []
  if (!all) conds.push(sql`${ev.category} IN ${cats}`)
  const base = conds.length
  if (f.since !== undefined) conds.push(sql`${ev.ts} >= ${f.since}`)
  // Its category too (an event type is named under it): the page then walks that category's index newest first instead
  // of every event, and a busy job feed no longer hides a rare key or minion type.
  if (f.event_type) conds.push(sql`${ev.eventType} = ${f.event_type}`, sql`${ev.category} = ${f.event_type.split('.')[0]!}`)
  if (f.minion_id) conds.push(q.engine === 'postgres' && f.minion_id.includes('\0') ? sql`1 = 0` : sql`${ev.minionId} = ${f.minion_id}`)
  // An exact, case-sensitive substring (minion ids are case-sensitive in salt) with no pattern characters to escape.
  // PostgreSQL text holds no NUL (nor may a parameter carry one): no stored id there contains it.
  if (f.minion) conds.push(twin(q, { sqlite: sql`instr(${ev.minionId}, ${f.minion}) > 0`, postgres: f.minion.includes('\0') ? sql`1 = 0` : sql`strpos(${ev.minionId}, ${f.minion}) > 0` }))
  if (f.jid) conds.push(sql`${ev.jid} = ${f.jid}`)
  if (f.source !== undefined) conds.push(q.engine === 'postgres' && f.source.includes('\0') ? sql`1 = 0` : sql`${ev.source} = ${f.source}`)
  if (f.hide_dispatch) conds.push(sql`${ev.eventType} <> 'job.new'`)
  // coalesce: an unknown success is not routine, and NOT(NULL) would otherwise drop the row.
  if (f.hide_routine) conds.push(sql`NOT (${ev.eventType} = 'job.ret' AND coalesce(${ev.success}, 0) = 1 AND coalesce(${ev.changed}, 0) = 0)`)
  if (f.success !== undefined) conds.push(sql`${ev.success} = ${f.success ? 1 : 0}`)
  if (f.search) {
    if (f.search.includes('\0')) {
      // A NUL ends a pattern for LIKE and is no FTS5 text: such a term is compared by instr, which counts bytes.
      // PostgreSQL text holds no NUL at all, so nothing stored there contains one.
      const t = f.search.toLowerCase()
      conds.push(twin(q, { sqlite: sql`(${sql.join(SEARCHED.map((c) => sql`instr(lower(${c}), ${t}) > 0`), sql` OR `)})`, postgres: sql`1 = 0` }))
      return { conds, cats: all ? null : cats, onlyCategories: false }
    }
    const p = containsPattern(f.search)
    // LIKE is case-insensitive for ASCII on SQLite; ILIKE is PostgreSQL's twin.
    const op = twin(q, { sqlite: sql`LIKE`, postgres: sql`ILIKE` })
    conds.push(sql`(${sql.join(SEARCHED.map((c) => sql`${c} ${op} ${p} ESCAPE '\\'`), sql` OR `)})`)
    // PostgreSQL's twin: its search table's candidates for the pattern, and every event it has not taken in yet.
    if (!scan && [...f.search].length >= 3 && q.engine === 'postgres') conds.push(searchCandidates(p))
    if (!scan && [...f.search].length >= 3 && q.engine === 'sqlite') {
      // LIKE decides for every row, so an answer never depends on how far the index has come; the trigram index (a
      // quoted phrase: a case-insensitive substring, folding beyond ASCII, so it finds a superset) narrows the indexed
      // rows to its candidates, and rows past its watermark are all looked at.
      const m = `"${f.search.replace(/"/g, '""')}"`
      conds.push(sql`(${ev.id} IN (SELECT rowid FROM search.activity_fts WHERE activity_fts MATCH ${m}) OR ${ev.id} > (SELECT watermark FROM search.search_state))`)
    }
  }
  return { conds, cats: all ? null : cats, onlyCategories: conds.length === base }
}

/** A WHERE clause of these conditions, or nothing. */
const whereOf = (conds: SQL[]) => (conds.length ? sql` WHERE ${sql.join(conds, sql` AND `)}` : sql.empty())

/** How a count may walk the table (SQLite's planner hints; PostgreSQL plans alone). */
export type Walk = 'ts' | 'none' | null

/** SQLite's hints per walk, one fragment each (a statement holding one stays flat: db/render.ts). */
const HINTS = { ts: sql` INDEXED BY activity_ts`, none: sql` NOT INDEXED` }

/** How many events match `conds`; `walk` pins SQLite to the time index or to no index. */
export async function countEvents(q: Queryable, conds: SQL[], walk: Walk = null): Promise<number> {
  const hint = walk === null || q.engine !== 'sqlite' ? sql.empty() : HINTS[walk]
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${ev}${hint}${whereOf(conds)}`))!.n
}

/** `from <= ts < to` among the events a total kept at `upTo` counts. */
export const tsBetween = (q: Queryable, from: number, to: number, upTo: number) => sql`${ev.ts} >= ${from} AND ${ev.ts} < ${to} AND ${seenBy(q, upTo)}`
/** `ts >= from`. */
export const tsFrom = (from: number) => sql`${ev.ts} >= ${from}`

/** A page of the events matching `conds`, newest first (ts, then id). */
export function eventsPage(q: Queryable, conds: SQL[], limit: number, offset: number): Promise<EventRow[]> {
  return q.rows<EventRow>(sql`SELECT ${COLS} FROM ${ev}${whereOf(conds)} ORDER BY ${ev.ts} DESC, ${ev.id} DESC LIMIT ${limitOf(limit)} OFFSET ${offset}`)
}

/** The newest `n` events of one category, newest first. */
export function newestOfCategory(q: Queryable, category: string, n: number): Promise<EventRow[]> {
  return q.rows<EventRow>(sql`SELECT ${COLS} FROM ${ev} WHERE ${ev.category} = ${category} ORDER BY ${ev.ts} DESC, ${ev.id} DESC LIMIT ${limitOf(n)}`)
}

/** The time of the event `n` places from the newest; undefined when there are not that many. */
export function tsAtDepth(db: Engine, n: number): Promise<number | undefined> {
  return keptTsAtDepth(db, n)
}

/** Times at depths, kept until the next commit. */
const keptTsAtDepth = untilCommitBy(async (db, n: number) =>
  (await db.row<{ ts: number }>(sql`SELECT ${ev.ts} AS ts FROM ${ev} ORDER BY ${ev.ts} DESC, ${ev.id} DESC LIMIT 1 OFFSET ${n}`))?.ts)

/** Events matching `conds` in id order, at most `limit`. */
export function eventsInIdOrder(q: Queryable, conds: SQL[], limit: number): Promise<EventRow[]> {
  return q.rows<EventRow>(sql`SELECT ${COLS} FROM ${ev}${whereOf(conds)} ORDER BY ${ev.id} LIMIT ${limitOf(limit)}`)
}
