/**
 * The SQLite form of the activity insert, the ingest's hottest statement: one prepared statement run per event, its
 * row id taken from the run (RETURNING through get() costs several times more per row).
 */
import type { Database } from 'bun:sqlite'
import type { Row } from '../../db/row'
import type { activityEvents } from '../../db/schema'

/** One event to insert, as stored (booleans 0/1, duration rounded). */
export type EventValues = Omit<Row<typeof activityEvents>, 'id'>

const INSERT = `INSERT INTO activity_events (ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary, source)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)`

/** Inserts the events in order on `client` (inside the caller's transaction); returns their ids. */
export function insertEventsSqlite(client: Database, rows: EventValues[]): number[] {
  // query() caches the statement by its text: prepared once per connection.
  const ins = client.query(INSERT)
  const ids: number[] = []
  for (const e of rows)
    ids.push(Number(ins.run(e.ts, e.category, e.event_type, e.minion_id, e.jid, e.fun, e.success, e.changed, e.initiator, e.target, e.duration_ms, e.summary, e.source).lastInsertRowid))
  return ids
}
