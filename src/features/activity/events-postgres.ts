/**
 * The PostgreSQL form of the activity insert (events-sqlite.ts is its twin): the events as one JSON row set per
 * statement, each queued for the search index in the same statement (search-index-postgres.ts), ids issued in order.
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { jsonRows } from '../../db/json-rows'
import { activityEvents as ev } from '../../db/schema'
import { SEARCH_QUEUE } from './search-index-postgres'
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
    const got = await q.rows<{ id: number }>(sql`WITH ins AS (INSERT INTO ${ev} (ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary, source)
        SELECT x.ts, x.category, x.event_type, x.minion_id, x.jid, x.fun, x.success, x.changed, x.initiator, x.target, x.duration_ms, x.summary, x.source
        FROM jsonb_to_recordset(${json}::text::jsonb) AS x(ts bigint, category text, event_type text, minion_id text, jid text, fun text, success smallint,
          changed smallint, initiator text, target text, duration_ms bigint, summary text, source text, n bigint)
        ORDER BY x.n RETURNING id)
      INSERT INTO ${SEARCH_QUEUE} (id) SELECT id FROM ins RETURNING id`)
    for (const r of got.sort((a, b) => a.id - b.id)) ids.push(r.id)
  }
  return ids
}
