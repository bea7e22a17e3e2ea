/** The activity feed: batched, de-duplicated writes and filtered, visibility-aware reads. */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { containsPattern } from '../../lib/sql'
import { iso } from '../../lib/clock'
import { holds, type Grant } from '../roles/service'
import { syncSearchIndex } from './search-index'
import { forgetTotals, keptTotal } from './totals'

/** Event categories and the permission that makes each visible. */
export const CATEGORY_PERMISSION: Record<string, string> = { job: 'job:*', key: 'key:*', minion: 'minion:*' }

/** One activity event to record; ts in epoch ms. */
export interface EventInput {
  ts: number
  category: string
  event_type: string
  minion_id?: string | null
  jid?: string | null
  fun?: string | null
  success?: boolean | null
  changed?: boolean | null
  initiator?: string | null
  target?: string | null
  duration_ms?: number | null
  summary: string
}

/** A stored event as the API returns it. */
export interface EventOut extends Omit<EventInput, 'ts'> {
  id: number
  ts: string
}

const COLS = 'id, ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary'
const bool = (v: number | null) => (v === null ? null : v === 1)
/** A row of activity_events as read (COLS). */
interface EventRow {
  id: number
  ts: number
  category: string
  event_type: string
  minion_id: string | null
  jid: string | null
  fun: string | null
  success: number | null
  changed: number | null
  initiator: string | null
  target: string | null
  duration_ms: number | null
  summary: string
}

/** A database row to its API shape. */
export function eventOut(r: EventRow): EventOut {
  return {
    id: r.id, ts: iso(r.ts), category: r.category, event_type: r.event_type, minion_id: r.minion_id, jid: r.jid, fun: r.fun,
    success: bool(r.success), changed: bool(r.changed), initiator: r.initiator, target: r.target, duration_ms: r.duration_ms, summary: r.summary,
  }
}

/** Records events in one transaction; returns them with their ids. (Job events are de-duplicated by the ingest.) */
export function recordEvents(deps: AppDeps, events: EventInput[]): EventOut[] {
  if (!events.length) return []
  // Totals come from per-category counters over these categories only; anything else is a caller's bug.
  const unknown = events.find((e) => !(e.category in CATEGORY_PERMISSION))
  if (unknown) throw new Error(`unknown activity category: ${unknown.category}`)
  // An event type is named under its category (job.ret, key.accept): the event_type filter relies on it (eventWhere).
  const misfiled = events.find((e) => !e.event_type.startsWith(`${e.category}.`))
  if (misfiled) throw new Error(`event type ${misfiled.event_type} is not of category ${misfiled.category}`)
  const db = deps.db.$client
  const ins = db.prepare(
    `INSERT INTO activity_events (ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)`,
  )
  const count = db.prepare('INSERT INTO activity_counts (category, n) VALUES (?1, ?2) ON CONFLICT (category) DO UPDATE SET n = n + excluded.n')
  const stored: EventOut[] = []
  db.transaction(() => {
    const perCategory = new Map<string, number>()
    for (const e of events) {
      const b = (v: boolean | null | undefined) => (v == null ? null : v ? 1 : 0)
      // run() + lastInsertRowid: RETURNING through get() costs several times more per row.
      const res = ins.run(
        e.ts, e.category, e.event_type, e.minion_id ?? null, e.jid ?? null, e.fun ?? null, b(e.success), b(e.changed),
        e.initiator ?? null, e.target ?? null, e.duration_ms == null ? null : Math.round(e.duration_ms), e.summary,
      )
      const row = { id: Number(res.lastInsertRowid) }
      perCategory.set(e.category, (perCategory.get(e.category) ?? 0) + 1)
      stored.push({ ...e, id: row.id, ts: iso(e.ts), minion_id: e.minion_id ?? null, jid: e.jid ?? null, fun: e.fun ?? null, success: e.success ?? null,
        changed: e.changed ?? null, initiator: e.initiator ?? null, target: e.target ?? null, duration_ms: e.duration_ms == null ? null : Math.round(e.duration_ms) })
    }
    for (const [c, n] of perCategory) count.run(c, n)
  })()
  return stored
}

/** Whether a minion.start of this minion is stored within `windowMs` of `ts`. */
export function startRecordedNear(deps: AppDeps, minionId: string, ts: number, windowMs: number): boolean {
  return !!deps.db.$client.query("SELECT 1 FROM activity_events WHERE minion_id = ?1 AND ts > ?2 AND ts < ?3 AND event_type = 'minion.start' LIMIT 1")
    .get(minionId, ts - windowMs, ts + windowMs)
}

/** The newest event id (0 when there is none): where a new live stream starts. */
export function lastEventId(deps: AppDeps): number {
  return deps.db.$client.query<{ id: number | null }, []>('SELECT max(id) AS id FROM activity_events').get()!.id ?? 0
}

/** One step of the search index on this connection (tests, seeding): drops pruned events, indexes up to `limit`. */
export function indexActivity(deps: AppDeps, limit = 50_000): number {
  return syncSearchIndex(deps.db.$client, limit)
}

/** Deletes events older than `days` days; returns how many went. */
export function pruneEvents(deps: AppDeps, days: number): number {
  const db = deps.db.$client
  const cutoff = deps.clock.now() - days * 86_400_000
  let removed = 0
  db.transaction(() => {
    const gone = db.query<{ category: string; n: number }, [number]>('SELECT category, count(*) AS n FROM activity_events WHERE ts < ?1 GROUP BY category').all(cutoff)
    db.query('DELETE FROM activity_events WHERE ts < ?1').run(cutoff)
    for (const g of gone) {
      db.query('UPDATE activity_counts SET n = n - ?2 WHERE category = ?1').run(g.category, g.n)
      removed += g.n
    }
  })()
  if (removed) forgetTotals(deps)
  return removed
}

/** Filters of the activity list and stream (contract §6). */
export interface ActivityFilter {
  since_minutes?: number
  category?: string
  categories?: string
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
}

/** The categories a user may see. */
export function visibleCategories(grants: Grant[]): string[] {
  return Object.entries(CATEGORY_PERMISSION).filter(([, res]) => holds(grants, 'view', res)).map(([c]) => c)
}

/** A WHERE clause and its arguments; onlyCategories when it filters by category alone (or not at all). */
export interface Where {
  sql: string
  args: (string | number)[]
  onlyCategories: boolean
}

/**
 * Builds the WHERE clause of a filter; null when nothing can match. With `scan`, a search is decided by LIKE alone
 * (for a few rows: the newest, or those stored since a count); without, the trigram index first narrows the rows.
 */
export function eventWhere(deps: AppDeps, f: ActivityFilter, visible: string[], afterId?: number, scan = false): Where | null {
  let cats = visible
  const asked = [...(f.category ? [f.category] : []), ...(f.categories ? f.categories.split(',').map((s) => s.trim()).filter(Boolean) : [])]
  if (asked.length) cats = cats.filter((c) => asked.includes(c))
  if (!cats.length) return null
  const where: string[] = []
  const args: (string | number)[] = []
  const arg = (v: string | number) => {
    args.push(v)
    return `?${args.length}`
  }
  if (cats.length < Object.keys(CATEGORY_PERMISSION).length) where.push(`category IN (${cats.map(arg).join(', ')})`)
  const base = where.length
  if (f.since_minutes) where.push(`ts >= ${arg(deps.clock.now() - f.since_minutes * 60_000)}`)
  // Its category too (an event type is named under it): the page then walks that category's index newest first instead
  // of every event, and a busy job feed no longer hides a rare key or minion type.
  if (f.event_type) where.push(`event_type = ${arg(f.event_type)}`, `category = ${arg(f.event_type.split('.')[0]!)}`)
  if (f.minion_id) where.push(`minion_id = ${arg(f.minion_id)}`)
  // instr: an exact, case-sensitive substring (minion ids are case-sensitive in salt) with no pattern characters to escape.
  if (f.minion) where.push(`instr(minion_id, ${arg(f.minion)}) > 0`)
  if (f.jid) where.push(`jid = ${arg(f.jid)}`)
  if (f.hide_dispatch) where.push(`event_type <> 'job.new'`)
  // coalesce: an unknown success is not routine, and NOT(NULL) would otherwise drop the row.
  if (f.hide_routine) where.push(`NOT (event_type = 'job.ret' AND coalesce(success, 0) = 1 AND coalesce(changed, 0) = 0)`)
  if (f.success !== undefined) where.push(`success = ${arg(f.success ? 1 : 0)}`)
  if (afterId !== undefined) where.push(`id > ${arg(afterId)}`)
  if (f.search) {
    const cols = ['summary', 'minion_id', 'fun', 'initiator', 'target']
    const like = (p: string) => `(${cols.map((c) => `${c} LIKE ${p} ESCAPE '\\'`).join(' OR ')})`
    if (f.search.includes('\0')) {
      // A NUL ends a pattern for LIKE and is no FTS5 text: such a term is compared by instr, which counts bytes.
      const t = arg(f.search.toLowerCase())
      where.push(`(${cols.map((c) => `instr(lower(${c}), ${t}) > 0`).join(' OR ')})`)
      return { sql: `WHERE ${where.join(' AND ')}`, args, onlyCategories: false }
    }
    const p = arg(containsPattern(f.search))
    where.push(like(p))
    if (!scan && [...f.search].length >= 3) {
      // LIKE decides for every row, so an answer never depends on how far the index has come; the trigram index (a
      // quoted phrase: a case-insensitive substring, folding beyond ASCII, so it finds a superset) narrows the indexed
      // rows to its candidates, and rows past its watermark are all looked at.
      const m = arg(`"${f.search.replace(/"/g, '""')}"`)
      where.push(`(id IN (SELECT rowid FROM search.activity_fts WHERE activity_fts MATCH ${m}) OR id > (SELECT watermark FROM search.search_state))`)
    }
  }
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', args, onlyCategories: where.length === base }
}

/** SQL after FROM: a WHERE clause (or nothing) and its arguments. */
type Clause = { sql: string; args: (string | number)[] }

/** A clause with one more condition whose `?` placeholders take `values`. */
function also(w: Clause, cond: string, ...values: number[]): Clause {
  let n = w.args.length
  const c = cond.replace(/\?/g, () => `?${++n}`)
  return { sql: w.sql ? `${w.sql} AND ${c}` : `WHERE ${c}`, args: [...w.args, ...values] }
}

/** Walks at most this many of the newest events for a page before asking the whole table (and the search index). */
const WALK_MAX = 20_000

/** Lists events newest first (ts, then id), with the total before paging. */
export function listEvents(deps: AppDeps, f: ActivityFilter, grants: Grant[], limit: number, offset: number) {
  const visible = visibleCategories(grants)
  const w = eventWhere(deps, f, visible)
  if (!w) return { total: 0, events: [] as EventOut[] }
  const db = deps.db.$client
  const count = (c: Clause, hint = '') => db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM activity_events ${hint} ${c.sql}`).get(...c.args)!.n
  const page = (c: Clause) =>
    db.query<EventRow, SQLQueryBindings[]>(`SELECT ${COLS} FROM activity_events ${c.sql} ORDER BY ts DESC, id DESC LIMIT ${limit} OFFSET ${offset}`).all(...c.args)
  if (w.onlyCategories) return { total: countByCategory(deps, w), events: (categoriesPage(deps, w, limit, offset) ?? page(w)).map(eventOut) }
  // The total is kept per filter (totals.ts); a time window's lower bound moves, so it is kept apart from the rest.
  const timeless = { ...f, since_minutes: undefined }
  const base = eventWhere(deps, timeless, visible)!
  const scan = eventWhere(deps, timeless, visible, undefined, true)!
  const cutoff = f.since_minutes ? deps.clock.now() - f.since_minutes * 60_000 : -Infinity
  // The total and the page start at the same cutoff.
  const inWindow = (c: Clause) => (f.since_minutes ? also(c, 'ts >= ?', cutoff) : c)
  // Each count walks the range it is about, whatever other index a filter could use: the new ids (by rowid), the
  // window's time range (not all ids up to the top), the slice of time the window left.
  const total = keptTotal(deps, `${f.since_minutes ?? ''}\0${base.sql}\0${JSON.stringify(base.args)}`, lastEventId(deps), cutoff, {
    upTo: (top) => count(also(inWindow(base), '+id <= ?', top), f.since_minutes ? 'INDEXED BY activity_ts' : ''),
    since: (from, top) => count(also(inWindow(scan), 'id > ? AND id <= ?', from, top), 'NOT INDEXED'),
    left: (from, to, upTo) => count(also(scan, 'ts >= ? AND ts < ? AND id <= ?', from, to, upTo), 'INDEXED BY activity_ts'),
  })
  if (total <= offset) return { total, events: [] as EventOut[] }
  // Substring filters have no index to walk in time order: their page is first looked for among the newest events;
  // the others' indexes give it directly.
  const newest = f.search || f.minion ? newestPage(deps, inWindow(scan), total, limit, offset, page) : null
  return { total, events: (newest ?? page(inWindow(base))).map(eventOut) }
}

/** How deep a page of a few categories is taken by merging each one's newest (category, ts) index range. */
const MERGE_MAX = 5_000

/**
 * A page of two or more (not all) categories: each one's newest offset + limit events from its own index, merged.
 * One index cannot give "category IN (a, b) ORDER BY ts" in order, and a busy job feed buries the others' events.
 */
function categoriesPage(deps: AppDeps, w: Where, limit: number, offset: number): EventRow[] | null {
  if (w.args.length < 2 || offset + limit > MERGE_MAX) return null
  const q = deps.db.$client.query<EventRow, [string, number]>(`SELECT ${COLS} FROM activity_events WHERE category = ?1 ORDER BY ts DESC, id DESC LIMIT ?2`)
  const rows = (w.args as string[]).flatMap((c) => q.all(c, offset + limit))
  return rows.sort((a, b) => b.ts - a.ts || b.id - a.id).slice(offset, offset + limit)
}

/**
 * A page taken from the newest events alone, when the filter's density says a short walk holds it; null when it
 * did not. Exact: the events at or after the walk's oldest time are a prefix of the order, and every match outside
 * them is older than every match inside.
 */
function newestPage(deps: AppDeps, scan: Clause, total: number, limit: number, offset: number, page: (c: Clause) => EventRow[]): EventRow[] | null {
  const db = deps.db.$client
  const events = db.query<{ n: number }, []>('SELECT coalesce(sum(n), 0) AS n FROM activity_counts').get()!.n
  // Twice the expected walk for offset + limit matches at this filter's share of all events.
  const walk = Math.ceil(((offset + limit) * events) / total) * 2 + 100
  if (walk > WALK_MAX) return null
  const oldest = db.query<{ ts: number }, [number]>('SELECT ts FROM activity_events ORDER BY ts DESC, id DESC LIMIT 1 OFFSET ?1').get(walk)?.ts
  if (oldest === undefined) return page(scan)
  const rows = page(also(scan, 'ts >= ?', oldest))
  return rows.length === limit || offset + rows.length === total ? rows : null
}

// Unfiltered totals come from counters kept by recordEvents/pruneEvents instead of counting millions of rows.
function countByCategory(deps: AppDeps, w: { args: (string | number)[] }) {
  const db = deps.db.$client
  const cats = w.args.length ? w.args : Object.keys(CATEGORY_PERMISSION)
  return db.query<{ n: number }, SQLQueryBindings[]>(`SELECT coalesce(sum(n), 0) AS n FROM activity_counts WHERE category IN (${cats.map(() => '?').join(', ')})`).get(...cats)!.n
}

/** Events after `afterId` in id order, for SSE replay. */
export function eventsAfter(deps: AppDeps, f: ActivityFilter, grants: Grant[], afterId: number, limit = 500): EventOut[] {
  const w = eventWhere(deps, f, visibleCategories(grants), afterId)
  if (!w) return []
  return deps.db.$client.query<EventRow, SQLQueryBindings[]>(`SELECT ${COLS} FROM activity_events ${w.sql} ORDER BY id LIMIT ${limit}`).all(...w.args).map(eventOut)
}
