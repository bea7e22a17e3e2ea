/** The activity feed: batched, de-duplicated writes and filtered, visibility-aware reads. */
import type { SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { iso } from '../../lib/clock'
import { holds, type Grant } from '../roles/service'
import { searchPending, syncSearchIndex } from './search-index-sqlite'
import { searchPendingPostgres, syncSearchIndexPostgres } from './search-index-postgres'
import { forgetTotals, keptTotal } from './totals'
import { DEFAULT_SOURCE, sourceName } from '../salt-sources/schema'
import {
  countedIn, countedTop, countEvents, cursorAt, deleteEventsBefore, eventsAfterCursor, eventsInRuns, eventsPage, eventWhere, insertEvents, maxEventId,
  newestOfCategory, seenBetween, seenBy, startBetween, tsAtDepth, tsBetween, tsFrom, type EventRow, type StreamCursor, type Where, type WhereFilter,
} from './store'

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
  /** The salt source it came through; `default` when not given. */
  source?: string
}

/** A stored event as the API returns it. */
export interface EventOut extends Omit<EventInput, 'ts'> {
  id: number
  ts: string
}

const bool = (v: number | null) => (v === null ? null : v === 1)

/** A database row to its API shape. */
export function eventOut(r: EventRow): EventOut {
  return {
    id: r.id, ts: iso(r.ts), category: r.category, event_type: r.event_type, minion_id: r.minion_id, jid: r.jid, fun: r.fun,
    success: bool(r.success), changed: bool(r.changed), initiator: r.initiator, target: r.target, duration_ms: r.duration_ms, summary: r.summary,
    source: sourceName(r.source),
  }
}

/**
 * Records events in one transaction (`tx` when the caller has one open: the ingest's batch); returns them with their
 * ids. (Job events are de-duplicated by the ingest.)
 */
export async function recordEvents(deps: AppDeps, events: EventInput[], tx?: Queryable): Promise<EventOut[]> {
  if (!events.length) return []
  // Totals come from per-category counters over these categories only; anything else is a caller's bug.
  const unknown = events.find((e) => !(e.category in CATEGORY_PERMISSION))
  if (unknown) throw new Error(`unknown activity category: ${unknown.category}`)
  // An event type is named under its category (job.ret, key.accept): the event_type filter relies on it (eventWhere).
  const misfiled = events.find((e) => !e.event_type.startsWith(`${e.category}.`))
  if (misfiled) throw new Error(`event type ${misfiled.event_type} is not of category ${misfiled.category}`)
  const b = (v: boolean | null | undefined) => (v == null ? null : v ? 1 : 0)
  const perCategory = new Map<string, number>()
  const rows = events.map((e) => {
    perCategory.set(e.category, (perCategory.get(e.category) ?? 0) + 1)
    return {
      ts: e.ts, category: e.category, event_type: e.event_type, minion_id: e.minion_id ?? null, jid: e.jid ?? null, fun: e.fun ?? null, success: b(e.success),
      changed: b(e.changed), initiator: e.initiator ?? null, target: e.target ?? null, duration_ms: e.duration_ms == null ? null : Math.round(e.duration_ms), summary: e.summary,
      source: e.source ?? DEFAULT_SOURCE,
    }
  })
  const ids = tx ? await insertEvents(tx, rows, perCategory) : await deps.db.tx((t) => insertEvents(t, rows, perCategory))
  return events.map((e, i) => ({ ...e, id: ids[i]!, ts: iso(e.ts), minion_id: e.minion_id ?? null, jid: e.jid ?? null, fun: e.fun ?? null, success: e.success ?? null,
    changed: e.changed ?? null, initiator: e.initiator ?? null, target: e.target ?? null, duration_ms: rows[i]!.duration_ms, source: rows[i]!.source }))
}

/** The events with ids in the inclusive runs `runs` (another instance stored exactly these), in id order. */
export async function eventsIn(deps: AppDeps, runs: [number, number][]): Promise<EventOut[]> {
  return runs.length ? (await eventsInRuns(deps.db, runs)).map(eventOut) : []
}

/** Whether a minion.start of this minion is stored within `windowMs` of `ts`. */
export function startRecordedNear(q: Queryable, minionId: string, ts: number, windowMs: number): Promise<boolean> {
  return startBetween(q, minionId, ts - windowMs, ts + windowMs)
}

/** The newest event id (0 when there is none): where a new live stream starts. */
export function lastEventId(deps: AppDeps): Promise<number> {
  return maxEventId(deps.db)
}

/** One step of the search index on this connection (tests, seeding): indexes up to `limit` events; how many it took. */
export async function indexActivity(deps: Pick<AppDeps, 'db'>, limit = 50_000): Promise<number> {
  return deps.db.native.engine === 'sqlite' ? syncSearchIndex(deps.db.native.client, limit) : syncSearchIndexPostgres(deps.db, limit)
}

/** Events stored but not yet in the search index. */
export async function searchBacklog(deps: AppDeps): Promise<number> {
  return deps.db.native.engine === 'sqlite' ? searchPending(deps.db.native.client) : searchPendingPostgres(deps.db)
}

/** Deletes events older than `days` days; returns how many went. */
export async function pruneEvents(deps: AppDeps, days: number): Promise<number> {
  const cutoff = deps.clock.now() - days * 86_400_000
  const removed = await deps.db.tx((tx) => deleteEventsBefore(tx, cutoff))
  if (removed) forgetTotals(deps)
  return removed
}

/** Filters of the activity list and stream (contract §6): the store's, with the window in minutes and the categories. */
export type ActivityFilter = Omit<WhereFilter, 'since'> & {
  since_minutes?: number
  category?: string
  categories?: string
}

/** The categories a user may see. */
export function visibleCategories(grants: Grant[]): string[] {
  return Object.entries(CATEGORY_PERMISSION).filter(([, res]) => holds(grants, 'view', res)).map(([c]) => c)
}

/**
 * The conditions of a filter over the categories the user may see; null when nothing can match. With `scan`, a search
 * is decided by LIKE alone (for a few rows: the newest, or those stored since a count); without, the trigram index
 * first narrows the rows.
 */
export function filterWhere(q: Queryable, deps: AppDeps, f: ActivityFilter, visible: string[], scan = false): Where | null {
  let cats = visible
  const asked = [...(f.category ? [f.category] : []), ...(f.categories ? f.categories.split(',').map((s) => s.trim()).filter(Boolean) : [])]
  if (asked.length) cats = cats.filter((c) => asked.includes(c))
  if (!cats.length) return null
  const since = f.since_minutes ? deps.clock.now() - f.since_minutes * 60_000 : undefined
  return eventWhere(q, { ...f, since }, cats, cats.length >= Object.keys(CATEGORY_PERMISSION).length, scan)
}

/** Every field of a filter, in one order (a Record, so a field added to ActivityFilter and not here fails to compile). */
const FILTER_FIELDS = Object.keys({
  since_minutes: 1, category: 1, categories: 1, event_type: 1, minion_id: 1, minion: 1, jid: 1, search: 1, hide_dispatch: 1,
  hide_routine: 1, source: 1, success: 1,
} satisfies Record<keyof ActivityFilter, 1>) as (keyof ActivityFilter)[]

/** A filter's identity: its fields and the categories the user may see (what filterWhere builds its conditions from). */
const filterKey = (f: ActivityFilter, visible: string[]) => JSON.stringify([visible, FILTER_FIELDS.map((k) => f[k] ?? null)])

/** Walks at most this many of the newest events for a page before asking the whole table (and the search index). */
const WALK_MAX = 20_000

/** Lists events newest first (ts, then id), with the total before paging. */
export async function listEvents(deps: AppDeps, f: ActivityFilter, grants: Grant[], limit: number, offset: number) {
  const db = deps.db
  const visible = visibleCategories(grants)
  const w = filterWhere(db, deps, f, visible)
  if (!w) return { total: 0, events: [] as EventOut[] }
  const page = (conds: SQL[]) => eventsPage(db, conds, limit, offset)
  if (w.onlyCategories) return { total: await countedIn(db, w.cats ?? Object.keys(CATEGORY_PERMISSION)), events: ((await categoriesPage(deps, w, limit, offset)) ?? (await page(w.conds))).map(eventOut) }
  // The total is kept per filter (totals.ts); a time window's lower bound moves, so it is kept apart from the rest.
  const timeless = { ...f, since_minutes: undefined }
  // Built again only where they differ from the page's conditions: a window adds its bound; a search's scan form drops
  // the trigram narrowing.
  const base = f.since_minutes ? filterWhere(db, deps, timeless, visible)!.conds : w.conds
  const scan = f.search ? filterWhere(db, deps, timeless, visible, true)!.conds : base
  const cutoff = f.since_minutes ? deps.clock.now() - f.since_minutes * 60_000 : -Infinity
  // The total and the page start at the same cutoff.
  const inWindow = (c: SQL[]) => (f.since_minutes ? [...c, tsFrom(cutoff)] : c)
  // Each count walks the range it is about, whatever other index a filter could use: the new ids (by rowid), the
  // window's time range (not all ids up to the top), the slice of time the window left. The key is the filter itself:
  // its fields and the categories the user may see decide the conditions.
  const key = `${f.since_minutes ?? ''}\0${filterKey(timeless, visible)}`
  // PostgreSQL: the total is kept up to the horizon (store.ts countedTop) and the events committed past it, by
  // transactions newer than one still open, are counted now, in the same statement.
  const { top, beyond } = await countedTop(db, inWindow(scan))
  const kept = await keptTotal(deps, key, top, cutoff, {
    upTo: (top) => countEvents(db, [...inWindow(base), seenBy(db, top)], f.since_minutes ? 'ts' : null),
    since: (from, top) => countEvents(db, [...inWindow(scan), seenBetween(db, from, top)], 'none'),
    left: (from, to, upTo) => countEvents(db, [...scan, tsBetween(db, from, to, upTo)], 'ts'),
  })
  const total = kept + beyond
  if (total <= offset) return { total, events: [] as EventOut[] }
  // Substring filters have no index to walk in time order: their page is first looked for among the newest events;
  // the others' indexes give it directly.
  const newest = f.search || f.minion ? await newestPage(deps, inWindow(scan), total, limit, offset, page) : null
  return { total, events: (newest ?? (await page(inWindow(base)))).map(eventOut) }
}

/** How deep a page of a few categories is taken by merging each one's newest (category, ts) index range. */
const MERGE_MAX = 5_000

/**
 * A page of two or more (not all) categories: each one's newest offset + limit events from its own index, merged.
 * One index cannot give "category IN (a, b) ORDER BY ts" in order, and a busy job feed buries the others' events.
 */
async function categoriesPage(deps: AppDeps, w: Where, limit: number, offset: number): Promise<EventRow[] | null> {
  if (!w.cats || w.cats.length < 2 || offset + limit > MERGE_MAX) return null
  const rows: EventRow[] = []
  for (const c of w.cats) rows.push(...(await newestOfCategory(deps.db, c, offset + limit)))
  return rows.sort((a, b) => b.ts - a.ts || b.id - a.id).slice(offset, offset + limit)
}

/**
 * A page taken from the newest events alone, when the filter's density says a short walk holds it; null when it
 * did not. Exact: the events at or after the walk's oldest time are a prefix of the order, and every match outside
 * them is older than every match inside.
 */
async function newestPage(deps: AppDeps, scan: SQL[], total: number, limit: number, offset: number, page: (c: SQL[]) => Promise<EventRow[]>): Promise<EventRow[] | null> {
  const events = await countedIn(deps.db, null)
  // Twice the expected walk for offset + limit matches at this filter's share of all events.
  const walk = Math.ceil(((offset + limit) * events) / total) * 2 + 100
  if (walk > WALK_MAX) return null
  const oldest = await tsAtDepth(deps.db, walk)
  if (oldest === undefined) return page(scan)
  const rows = await page([...scan, tsFrom(oldest)])
  return rows.length === limit || offset + rows.length === total ? rows : null
}

export type { StreamCursor }

/** Where a live stream starts: after the event `afterId` (Last-Event-ID, after_id), or after what is stored now (null). */
export function streamCursor(deps: AppDeps, afterId: number | null): Promise<StreamCursor> {
  return cursorAt(deps.db, afterId)
}

/**
 * The events a live stream delivers next after `cursor`, with the cursor after them; `held` when committed events
 * wait behind an older transaction still open (PostgreSQL, several writers: store.ts eventsAfterCursor).
 */
export async function eventsAfter(deps: AppDeps, f: ActivityFilter, grants: Grant[], cursor: StreamCursor, limit = 500) {
  const w = filterWhere(deps.db, deps, f, visibleCategories(grants))
  if (!w) return { events: [] as EventOut[], next: cursor, more: false, held: false }
  const r = await eventsAfterCursor(deps.db, w.conds, cursor, limit)
  return { events: r.rows.map(eventOut), next: r.next, more: r.more, held: r.held }
}
