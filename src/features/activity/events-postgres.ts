/**
 * The PostgreSQL form of the activity insert (events-sqlite.ts is its twin): the events as one JSON row set per
 * statement, ids issued in order; the table's trigger queues each for the search index (search-index-postgres.ts).
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { jsonRows } from '../../db/json-rows'
import { activityEvents as ev } from '../../db/schema'
import type { EventValues } from './events-sqlite'

/** Events per statement: a few megabytes of JSON at most (summaries are short). */
const CHUNK = 2000

/** A 0/1 column's value as JSON must carry it (a JSON true is no smallint). */
const flag = (v: unknown) => (typeof v === 'boolean' ? Number(v) : v)

/** Inserts the events in order (inside the caller's transaction); returns their ids. */
export async function insertEventsPostgres(q: Queryable, rows: EventValues[]): Promise<number[]> {
  const ids: number[] = []
  for (let i = 0; i < rows.length; i += CHUNK) {
    const json = jsonRows(rows.slice(i, i + CHUNK).map((e, n) => ({ ...e, success: flag(e.success), changed: flag(e.changed), n })))
    // Ids are drawn as the rows come out of the ORDER BY, so they follow the given order.
    // The table's statement trigger queues the new ids for the search index (drizzle-pg 0008).
    const got = await q.rows<{ id: number }>(sql`INSERT INTO ${ev} (ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary, source)
      SELECT x.ts, x.category, x.event_type, x.minion_id, x.jid, x.fun, x.success, x.changed, x.initiator, x.target, x.duration_ms, x.summary, x.source
      FROM jsonb_to_recordset(${json}::text::jsonb) AS x(ts bigint, category text, event_type text, minion_id text, jid text, fun text, success smallint,
        changed smallint, initiator text, target text, duration_ms bigint, summary text, source text, n bigint)
      ORDER BY x.n RETURNING id`)
    for (const r of got.sort((a, b) => a.id - b.id)) ids.push(r.id)
  }
  return ids
}
