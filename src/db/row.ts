/**
 * A table's row as the database hands it back, derived from the table's definition in `schema/`: keyed by column
 * name (`key_state`, not `keyState`), booleans as the 0/1 both engines store, nullable where the column is.
 * Stores type what they read with it (`Pick<Row<typeof minions>, 'id' | 'key_state'>`), never with a hand-written
 * interface, so renaming or retyping a column breaks the store at compile time.
 */
import type { Column, Table } from 'drizzle-orm'

/** What a column holds as stored: booleans are 0 or 1 on both engines. */
type Stored<C extends Column> = C['_']['dataType'] extends 'boolean' ? number : C['_']['data']

/** A column's stored value, with null where the column admits it. */
type Value<C extends Column> = C['_']['notNull'] extends true ? Stored<C> : Stored<C> | null

/** One row of table `T`, keyed by database column names. */
export type Row<T extends Table> = {
  [K in keyof T['_']['columns'] as T['_']['columns'][K]['_']['name']]: Value<T['_']['columns'][K]>
}
