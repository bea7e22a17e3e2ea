/** SQL of the salt sources each minion has been seen through (contract §15 "Several masters"): `minion_sources`. */
import type { SQL } from 'drizzle-orm'
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import { minions as m, minionSources as ms } from '../../db/schema'
import { DEFAULT_SOURCE } from '../salt-sources/schema'
import { DEFAULT_SOURCE_SQL } from '../salt-sources/store'

/** Rows per INSERT: well under either engine's limit of bound parameters. */
const CHUNK = 500
/** last_seen_at moves at most this often: every ingest batch names its minions, and a row rewritten per batch is waste. */
const SEEN_RESOLUTION_MS = 3_600_000

/**
 * Notes that these minions were seen through `source` at `now` (first time: both times; again: the last, to the hour).
 * A first sighting also rewrites the minion's `sources` (the names its list row carries).
 */
export async function noteSeenThrough(q: Queryable, ids: string[], source: string, now: number) {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const values = ids.slice(i, i + CHUNK).map((id) => sql`(${id}, ${source}, ${now}, ${now})`)
    // Rows come back only when written: new ones, and those whose last sighting moved (once an hour); a new one's first
    // sighting is now. (An older one first seen at this same millisecond rewrites its list to what it already is.)
    const written = await q.rows<{ minion_id: string; first_seen_at: number }>(sql`INSERT INTO ${ms} (minion_id, source, first_seen_at, last_seen_at)
      VALUES ${sql.join(values, sql`, `)}
      ON CONFLICT (minion_id, source) DO UPDATE SET last_seen_at = excluded.last_seen_at
      WHERE ${ms.lastSeenAt} < excluded.last_seen_at - ${SEEN_RESOLUTION_MS}
      RETURNING ${ms.minionId}, ${ms.firstSeenAt}`)
    const added = written.filter((r) => r.first_seen_at === now).map((r) => r.minion_id)
    if (added.length) await q.exec(sql`UPDATE ${m} SET sources = ${namesOf()} WHERE ${m.id} IN ${added}`)
  }
}

/** A minion's source names in name order joined by commas, from its sightings (those that meet `cond`): a subquery of `minions`. */
const namesOf = (cond?: SQL): SQL =>
  sql`(SELECT string_agg(${ms.source}, ',' ORDER BY ${ms.source}) FROM ${ms} WHERE ${ms.minionId} = ${m.id}${cond ? sql` AND ${cond}` : sql.empty()})`

/**
 * Forgets every minion's sighting through a removed source: the remaining sources' lists speak for those minions
 * again. Their `sources` lose it first.
 */
export async function forgetSource(q: Queryable, source: string) {
  await q.exec(sql`UPDATE ${m} SET sources = ${namesOf(sql`${ms.source} <> ${source}`)}
    WHERE ${m.id} IN (SELECT ${ms.minionId} FROM ${ms} WHERE ${ms.source} = ${source})`)
  await q.exec(sql`DELETE FROM ${ms} WHERE ${ms.source} = ${source}`)
}

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
 * A page query's column `sources`, read so the common case costs nothing: null when the minion was seen through
 * `default` alone (SQLite hands every text value over as a new string, and the same 'default' on every row of a
 * one-master fleet was most of what the column cost), else the stored names. A row without stored names reads its
 * sightings ('' when there are none): a minion first seen through a source before its row existed (its first sighting
 * found no row to write, and the row was made later) is listed with its sources all the same.
 */
export const sourcesColumn: SQL =
  sql`CASE WHEN ${m.sources} IS NULL THEN coalesce(${namesOf()}, '') WHEN ${m.sources} = ${DEFAULT_SOURCE_SQL} THEN NULL ELSE ${m.sources} END AS sources`

/** The names of a `sourcesColumn` value, by name. */
export const sourceNames = (read: string | null): string[] => (read === null ? [DEFAULT_SOURCE] : read ? read.split(',') : [])

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
