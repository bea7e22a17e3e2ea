/** SQL of the salt sources each minion has been seen through (contract §15 "Several masters"): `minion_sources`. */
import type { SQL } from 'drizzle-orm'
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { minions as m, minionSources as ms } from '../../db/schema'

/** Rows per INSERT: well under either engine's limit of bound parameters. */
const CHUNK = 500
/** last_seen_at moves at most this often: every ingest batch names its minions, and a row rewritten per batch is waste. */
const SEEN_RESOLUTION_MS = 3_600_000

/** Notes that these minions were seen through `source` at `now` (first time: both times; again: the last, to the hour). */
export async function noteSeenThrough(q: Queryable, ids: string[], source: string, now: number) {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const values = ids.slice(i, i + CHUNK).map((id) => sql`(${id}, ${source}, ${now}, ${now})`)
    await q.exec(sql`INSERT INTO ${ms} (minion_id, source, first_seen_at, last_seen_at) VALUES ${sql.join(values, sql`, `)}
      ON CONFLICT (minion_id, source) DO UPDATE SET last_seen_at = excluded.last_seen_at
      WHERE ${ms.lastSeenAt} < excluded.last_seen_at - ${SEEN_RESOLUTION_MS}`)
  }
}

/** Forgets every minion's sighting through a removed source: the remaining sources' lists speak for those minions again. */
export const forgetSource = (q: Queryable, source: string) => q.exec(sql`DELETE FROM ${ms} WHERE ${ms.source} = ${source}`)

/** The sources of each of these minions, each list by name. */
export async function sourcesOf(q: Queryable, ids: string[]): Promise<Map<string, string[]>> {
  if (!ids.length) return new Map()
  return byMinion(await q.rows<Sighting>(sql`SELECT ${ms.minionId}, ${ms.source} FROM ${ms} WHERE ${ms.minionId} IN ${ids} ORDER BY ${ms.source}`))
}

/** One sighting: a minion and a source it was seen through. */
type Sighting = { minion_id: string; source: string }

/** Sightings grouped by minion, each list in the rows' order. */
function byMinion(rows: Sighting[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const r of rows) {
    const list = out.get(r.minion_id)
    if (list) list.push(r.source)
    else out.set(r.minion_id, [r.source])
  }
  return out
}

/**
 * A page query's column `sources`: the minion's source names joined by commas (names are `[a-z0-9-]`, so a comma
 * cannot be part of one), in no set order (sourceNames sorts them: an ORDER BY inside the aggregate costs a sorter per
 * row). One correlated seek per listed row, where a second statement binding the page's ids cost the minion list a
 * quarter of its time. string_agg is the same text on both engines (SQLite has it since 3.44).
 */
export const sourcesColumn: SQL = sql`(SELECT string_agg(${ms.source}, ',') FROM ${ms} WHERE ${ms.minionId} = ${m.id}) AS sources`

/** The names of a `sourcesColumn` value, by name. */
export const sourceNames = (joined: string | null): string[] => (joined ? joined.split(',').sort() : [])

/** Every minion's sources, each list by name (the key lists carry them whole: one read of a small table). */
export async function allSightings(q: Queryable): Promise<Map<string, string[]>> {
  return byMinion(await q.rows<Sighting>(sql`SELECT ${ms.minionId}, ${ms.source} FROM ${ms} ORDER BY ${ms.minionId}, ${ms.source}`))
}

/** The minions also seen through a source other than `source`: one master's full list does not speak for them. */
export async function seenElsewhere(q: Queryable, source: string): Promise<Set<string>> {
  const rows = await q.rows<{ minion_id: string }>(sql`SELECT DISTINCT ${ms.minionId} FROM ${ms} WHERE ${ms.source} <> ${source}`)
  return new Set(rows.map((r) => r.minion_id))
}

/** The condition on `minions` rows: seen through this source. */
export const seenThroughSql = (source: string): SQL =>
  // No stored source holds a NUL (PostgreSQL could not even take it as a parameter): such a filter matches nothing.
  source.includes('\0') ? sql`1 = 0` : sql`${m.id} IN (SELECT ${ms.minionId} FROM ${ms} WHERE ${ms.source} = ${source})`
