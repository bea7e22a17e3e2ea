/** SQL of the salt sources beyond `default`: one JSON document per source, as the settings' salt section stores its own. */
import type { AnyColumn, SQL } from 'drizzle-orm'
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { saltSources } from '../../db/schema'
import { DEFAULT_SOURCE } from './schema'

/** A stored source. */
export type SaltSourceRow = Row<typeof saltSources>

/**
 * A list's read of a row's `source` column `col`, as `source`: null when it is the default source (the service names
 * it again with `sourceName`). SQLite hands every text value to the program as a new string, and `'default'` on every
 * row of a one-master install cost a page of 200 events 14% more than the page without the column (bench/RESULTS.md,
 * session 13); a null costs nothing.
 */
export const sourceColumn = (col: AnyColumn): SQL => sql`NULLIF(${col}, ${DEFAULT_SOURCE_SQL}) AS source`

/** The default source's name as an SQL literal (no parameter: the fragments that hold it stay constant, render.ts). */
export const DEFAULT_SOURCE_SQL: SQL = sql.raw(`'${DEFAULT_SOURCE}'`)

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
