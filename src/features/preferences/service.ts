/** Each user's display preferences (the time zone the dashboard shows times in). */
import type { AppDeps } from '../../deps'
import { storedTimeZone, writeTimeZone } from './store'

/** The zones a user may choose: the browser's own, or UTC. */
export const TIME_ZONES = ['local', 'utc'] as const
export type TimeZoneChoice = (typeof TIME_ZONES)[number]

/** A user's preferences, the defaults when they never chose. */
export async function readPreferences(deps: AppDeps, userId: string): Promise<{ time_zone: TimeZoneChoice }> {
  return { time_zone: (await storedTimeZone(deps.db, userId)) === 'utc' ? 'utc' : 'local' }
}

/** Stores what a user chose; returns the preferences now in effect. */
export async function writePreferences(deps: AppDeps, userId: string, p: { time_zone: TimeZoneChoice }) {
  await writeTimeZone(deps.db, userId, p.time_zone, deps.clock.now())
  return readPreferences(deps, userId)
}
