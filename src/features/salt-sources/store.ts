/** SQL of the salt sources beyond `default`: one JSON document per source, as the settings' salt section stores its own. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { saltSources } from '../../db/schema'

/** A stored source. */
export type SaltSourceRow = Row<typeof saltSources>

/** Every stored source, by name. */
export const allSourceRows = (q: Queryable) => q.rows<SaltSourceRow>(sql`SELECT * FROM ${saltSources} ORDER BY ${saltSources.name}`)

/** One stored source, or undefined. */
export const sourceRow = (q: Queryable, name: string) => q.row<SaltSourceRow>(sql`SELECT * FROM ${saltSources} WHERE ${saltSources.name} = ${name}`)

/** Adds a source; false when the name is taken (the caller answers the conflict). */
export async function insertSource(q: Queryable, name: string, value: string, now: number) {
  const r = await q.row<{ name: string }>(sql`INSERT INTO ${saltSources} (name, value, created_at, updated_at) VALUES (${name}, ${value}, ${now}, ${now})
    ON CONFLICT (name) DO NOTHING RETURNING name`)
  return r !== undefined
}

/** Replaces a source's document. */
export const writeSource = (q: Queryable, name: string, value: string, now: number) =>
  q.exec(sql`UPDATE ${saltSources} SET value = ${value}, updated_at = ${now} WHERE ${saltSources.name} = ${name}`)

/** Deletes a source; false when there was none. */
export async function removeSource(q: Queryable, name: string) {
  const r = await q.row<{ name: string }>(sql`DELETE FROM ${saltSources} WHERE ${saltSources.name} = ${name} RETURNING name`)
  return r !== undefined
}
