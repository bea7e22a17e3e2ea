/** SQL of the instances feature: one row per running Saltdeck instance on this database, written by its heartbeat. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { instances } from '../../db/schema'

/** A stored instance row (`leads` is a JSON list). */
export type InstanceRow = Row<typeof instances>

/** Writes this instance's row: inserted at start, its last_seen_at, leads and health moved by each heartbeat. */
export const upsertInstance = (q: Queryable, r: InstanceRow) =>
  q.exec(sql`INSERT INTO ${instances} (id, hostname, version, engine, started_at, last_seen_at, leads, health)
    VALUES (${r.id}, ${r.hostname}, ${r.version}, ${r.engine}, ${r.started_at}, ${r.last_seen_at}, ${r.leads}, ${r.health})
    ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at, leads = excluded.leads, health = excluded.health`)

/** Sets the leads of another instance's row (its claims a new holder took over), leaving its last_seen_at alone. */
export const setLeads = (q: Queryable, id: string, leads: string) => q.exec(sql`UPDATE ${instances} SET leads = ${leads} WHERE ${instances.id} = ${id}`)

/** Instances seen since `since`, oldest start first. */
export const instancesSeenSince = (q: Queryable, since: number) =>
  q.rows<InstanceRow>(sql`SELECT * FROM ${instances} WHERE ${instances.lastSeenAt} >= ${since} ORDER BY ${instances.startedAt}, ${instances.id}`)

/** Deletes one instance's row (a graceful stop), and rows not seen since `before` (instances long gone). */
export async function deleteInstance(q: Queryable, id: string, before: number) {
  await q.exec(sql`DELETE FROM ${instances} WHERE ${instances.id} = ${id} OR ${instances.lastSeenAt} < ${before}`)
}
