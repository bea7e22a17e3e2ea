/** SQL of the preferences feature: one `user_preferences` row per user who chose something. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { userPreferences } from '../../db/schema'

/** A user's stored time zone choice, or undefined when the user never chose. */
export async function storedTimeZone(q: Queryable, userId: string): Promise<string | undefined> {
  const r = await q.row<Pick<Row<typeof userPreferences>, 'time_zone'>>(
    sql`SELECT ${userPreferences.timeZone} FROM ${userPreferences} WHERE ${userPreferences.userId} = ${userId}`)
  return r?.time_zone
}

/** Stores a user's time zone choice. */
export async function writeTimeZone(q: Queryable, userId: string, timeZone: string, now: number) {
  await q.exec(sql`INSERT INTO ${userPreferences} (user_id, time_zone, updated_at) VALUES (${userId}, ${timeZone}, ${now})
    ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone, updated_at = excluded.updated_at`)
}
