/**
 * Keeping PostgreSQL's activity search index current (contract §6 `search`; drizzle-pg 0008): events are queued in
 * activity_search_queue by their insert's statement (a trigger on activity_events, whatever writes them), and each
 * step here moves a batch of them into activity_search, one text of the searched columns per event under a trigram
 * index. SQLite's twin is search-index-sqlite.ts. Steps of
 * several instances do not meet: each takes the queued ids no other step holds (SKIP LOCKED).
 */
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { activityEvents as ev } from '../../db/schema'

/** The queue and the index, which only PostgreSQL has (no drizzle table: the SQLite schema is the one definition). */
export const SEARCH_TABLE = sql.raw('"activity_search"')
export const SEARCH_QUEUE = sql.raw('"activity_search_queue"')

/**
 * One step: indexes up to `limit` queued events in one transaction; returns how many ids it took off the queue. The
 * text joins the columns with a newline, so a match inside it is a candidate the columns' own ILIKE then decides.
 */
export async function syncSearchIndexPostgres(q: Queryable, limit = 20_000): Promise<number> {
  const r = await q.row<{ n: number }>(sql`WITH batch AS (
      DELETE FROM ${SEARCH_QUEUE} WHERE id IN (SELECT id FROM ${SEARCH_QUEUE} ORDER BY id LIMIT ${limitOf(limit)} FOR UPDATE SKIP LOCKED) RETURNING id),
    indexed AS (INSERT INTO ${SEARCH_TABLE} (id, doc)
      SELECT ${ev.id}, concat_ws(E'\\n', ${ev.summary}, ${ev.minionId}, ${ev.fun}, ${ev.initiator}, ${ev.target}) FROM ${ev} WHERE ${ev.id} IN (SELECT id FROM batch)
      ON CONFLICT (id) DO NOTHING)
    SELECT count(*) AS n FROM batch`)
  return r?.n ?? 0
}

/** Events stored but not yet indexed. */
export async function searchPendingPostgres(q: Queryable): Promise<number> {
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${SEARCH_QUEUE}`))!.n
}

/**
 * The condition narrowing a search to the index's candidates for `pattern`, and every event not indexed yet. One IN
 * over both sets, which PostgreSQL plans as a semi-join (hashed, or driven by the trigram index for a rare pattern).
 * Two INs joined by OR planned the index's set as a plain subplan once it outgrew work_mem, scanned again for every
 * event: a common word's count over 800,000 events ran for minutes (bench/RESULTS.md, session 12). UNION ALL: the two
 * sets need no merging, and a duplicate changes nothing in an IN.
 */
export const searchCandidates = (pattern: string) =>
  sql`${ev.id} IN (SELECT id FROM ${SEARCH_TABLE} WHERE doc ILIKE ${pattern} ESCAPE '\\' UNION ALL SELECT id FROM ${SEARCH_QUEUE})`
