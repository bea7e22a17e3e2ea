/** Each user's display preferences (the time zone the dashboard shows times in); the SQL of `user_preferences`. */
import type { AppDeps } from '../../deps'

/** The zones a user may choose: the browser's own, or UTC. */
export const TIME_ZONES = ['local', 'utc'] as const
export type TimeZoneChoice = (typeof TIME_ZONES)[number]

/** A user's preferences, the defaults when they never chose. */
export function readPreferences(deps: AppDeps, userId: string): { time_zone: TimeZoneChoice } {
  const r = deps.db.$client.query<{ time_zone: string }, [string]>('SELECT time_zone FROM user_preferences WHERE user_id = ?1').get(userId)
  return { time_zone: r?.time_zone === 'utc' ? 'utc' : 'local' }
}

/** Stores what a user chose; returns the preferences now in effect. */
export function writePreferences(deps: AppDeps, userId: string, p: { time_zone: TimeZoneChoice }) {
  deps.db.$client
    .query('INSERT INTO user_preferences (user_id, time_zone, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (user_id) DO UPDATE SET time_zone = ?2, updated_at = ?3')
    .run(userId, p.time_zone, deps.clock.now())
  return readPreferences(deps, userId)
}
