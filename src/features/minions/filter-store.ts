/** The minion list's filters as SQL conditions: the `status` values and `q` (substring, salt glob or grain match), each engine's form beside the other's. */
import type { SQL } from 'drizzle-orm'
import { sql } from '../../db/sql'
import { twin, type Queryable } from '../../db/engine'
import { minions as m } from '../../db/schema'
import { containsPattern } from '../../lib/sql'
import { hasGlobChars, pgGlobRegex, sqliteGlob } from '../../lib/glob'

/** Values of the minion list's `status` filter. */
export const MINION_STATUSES = ['online', 'offline', 'accepted', 'pending', 'rejected', 'denied', 'healthy', 'changed', 'unhealthy', 'blocked'] as const

/** One value of the `status` filter. */
export type MinionStatus = (typeof MINION_STATUSES)[number]

const STATUS_SQL: Record<MinionStatus, SQL> = {
  // Offline means an accepted minion that does not answer; a pending or rejected key is not part of the fleet yet.
  online: sql`${m.online} = 1`, offline: sql`${m.online} = 0 AND ${m.keyState} = 'accepted'`,
  accepted: sql`${m.keyState} = 'accepted'`, pending: sql`${m.keyState} = 'pending'`, rejected: sql`${m.keyState} = 'rejected'`, denied: sql`${m.keyState} = 'denied'`,
  healthy: sql`${m.lastRunStatus} = 'healthy'`, changed: sql`${m.lastRunStatus} = 'changed'`, unhealthy: sql`${m.lastRunStatus} = 'unhealthy'`,
  blocked: sql`${m.lastRunStatus} = 'blocked'`,
}

/** The condition of one `status` value. */
export const statusCondition = (s: MinionStatus): SQL => STATUS_SQL[s]

/** A grain name in `q`'s `name:value` form: a word, as top-level grain names are. */
const GRAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** ASCII lower case, as SQLite's lower() folds; salt folds grain values and patterns alike before matching. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase())
/** A grain value (json_each row `t`) as salt's grain matcher compares it (Python's str() lowered): JSON true/false/null as Python prints them. */
const grainText = (t: string) => sql.raw(`CASE ${t}.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'none' ELSE lower(${t}.value) END`)
/** The same for PostgreSQL (a jsonb value `t`.value; lower() folds ASCII alone under collation C, as SQLite's does). */
const grainTextPg = (t: string) => sql.raw(`CASE jsonb_typeof(${t}.value) WHEN 'boolean' THEN ${t}.value #>> '{}' WHEN 'null' THEN 'none' ELSE lower(${t}.value #>> '{}') END`)

/**
 * The minion list's `q` as an SQL condition for the engine `db` runs on (values bound, never spliced):
 * - `G@name:glob` or `name:glob` (name a word): minions whose top-level grain `name` matches the glob, case-insensitively
 *   (salt folds both sides); a list grain matches when any element does; `G@name` alone: minions that have the grain;
 * - text with `*`, `?` or `[`: salt's glob on the whole id, case-sensitive;
 * - anything else: a case-insensitive substring of the id.
 * SQLite reads the grains with json_each and matches with GLOB; PostgreSQL with jsonb_each and a regular expression.
 */
export function minionQuery(db: Queryable, q: string): SQL {
  const none = sql`1 = 0`
  // PostgreSQL text holds no NUL (nor may a parameter carry one): no id or grain there contains it.
  if (db.engine === 'postgres' && q.includes('\u0000')) return none
  const grain = q.startsWith('G@') ? q.slice(2) : null
  const colon = (grain ?? q).indexOf(':')
  const name = colon < 0 ? grain : (grain ?? q).slice(0, colon)
  if (name !== null && (grain !== null || GRAIN_NAME.test(name))) {
    const each = twin(db, {
      sqlite: sql`SELECT 1 FROM json_each(${m.grains}) AS g WHERE g.key = ${name}`,
      postgres: sql`SELECT 1 FROM jsonb_each(${m.grains}::jsonb) AS g WHERE g.key = ${name}`,
    })
    if (colon < 0) return sql`EXISTS (${each})`
    const glob = sqliteGlob(asciiLower((grain ?? q).slice(colon + 1)))
    if (glob === null) return none
    if (db.engine === 'postgres') {
      const re = pgGlobRegex(glob)
      // The array guard inside: PostgreSQL may read a set-returning function's argument before the CASE decides.
      return sql`EXISTS (${each} AND CASE WHEN jsonb_typeof(g.value) = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(g.value) = 'array' THEN g.value ELSE '[]' END) AS e(value)
        WHERE jsonb_typeof(e.value) <> 'object' AND ${grainTextPg('e')} ~ ${re}) WHEN jsonb_typeof(g.value) = 'object' THEN false ELSE ${grainTextPg('g')} ~ ${re} END)`
    }
    return sql`EXISTS (${each} AND CASE WHEN g.type = 'array' THEN EXISTS (SELECT 1 FROM json_each(g.value) AS e WHERE e.type <> 'object' AND ${grainText('e')} GLOB ${glob})
      WHEN g.type = 'object' THEN 0 ELSE ${grainText('g')} GLOB ${glob} END)`
  }
  if (hasGlobChars(q)) {
    const glob = sqliteGlob(q)
    if (glob === null) return none
    return twin(db, { sqlite: sql`${m.id} GLOB ${glob}`, postgres: sql`${m.id} ~ ${pgGlobRegex(glob)}` })
  }
  // LIKE is case-insensitive for ASCII on SQLite; ILIKE is PostgreSQL's twin.
  return twin(db, { sqlite: sql`${m.id} LIKE ${containsPattern(q)} ESCAPE '\\'`, postgres: sql`${m.id} ILIKE ${containsPattern(q)} ESCAPE '\\'` })
}
