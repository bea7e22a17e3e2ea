/** Minion rows: grains written by the grains poller, the minion list and detail, and the key list. */
import type { SQL } from 'drizzle-orm'
import { sql } from '../../db/sql'
import type { AppDeps } from '../../deps'
import { twin, type Queryable } from '../../db/engine'
import { minions as m } from '../../db/schema'
import { containsPattern } from '../../lib/sql'
import { hasGlobChars, pgGlobRegex, sqliteGlob } from '../../lib/glob'
import { NotFound } from '../../lib/errors'
import { isoOrNull } from '../../lib/clock'
import { boundDepth, MAX_GRAIN_DEPTH } from './grains-depth'
import { forgetSource, noteSeenThrough, seenThroughSql, sourcesOf } from './sources-store'
import {
  acceptedOf, idsWithKey, idsWithoutFingerprint, insertMinion, keyRows, minionPage, minionRow, updateGrains, versionCounts, type MinionRow,
} from './store'

/** Creates an empty minion row when the id is new, on `q` (the caller's transaction, or the engine); 1 when it did. */
export function ensureMinionIn(deps: AppDeps, q: Queryable, id: string): Promise<number> {
  return insertMinion(q, id, deps.clock.now())
}

const str = (v: unknown, max = 255) => (typeof v === 'string' ? v.slice(0, max) : typeof v === 'number' ? String(v) : null)

/** The address shown for a minion: its first non-loopback IPv4 grain. */
function firstIp(grains: Record<string, unknown>): string | null {
  const v4 = Array.isArray(grains.ipv4) ? (grains.ipv4 as unknown[]) : []
  const ip = v4.find((a) => typeof a === 'string' && !a.startsWith('127.'))
  return typeof ip === 'string' ? ip : null
}

/** Stores the grains of many minions in one transaction, with the summary columns taken from them. */
export async function recordGrains(deps: AppDeps, facts: { id: string; grains: Record<string, unknown> }[], inTx?: Queryable): Promise<void> {
  const now = deps.clock.now()
  const store = async (tx: Queryable) => {
    for (const { id, grains: given } of facts) {
      await insertMinion(tx, id, now)
      // One minion's document nested past what SQLite's JSON functions read must not break them for the fleet.
      const { grains: g, cut } = boundDepth(given)
      if (cut) deps.log.warn('grains nested too deep: cut', { minion_id: id, max_depth: MAX_GRAIN_DEPTH })
      await updateGrains(tx, id, { grains: JSON.stringify(g), os: str(g.os), osrelease: str(g.osrelease), ip: firstIp(g), salt_version: str(g.saltversion), os_family: str(g.os_family) }, now)
    }
  }
  // Inside applyFacts' transaction (grains as salt facts) the batch's tx; on its own, a transaction of its own.
  await (inTx ? store(inTx) : deps.db.tx(store))
}

/** Ids of the accepted minions, sorted. */
export function acceptedMinionIds(deps: AppDeps): Promise<string[]> {
  return idsWithKey(deps.db, 'accepted')
}

/** Which of these minions have an accepted key now. */
export async function acceptedAmong(deps: AppDeps, ids: string[]): Promise<Set<string>> {
  const accepted = await acceptedOf(deps.db, ids)
  return new Set(ids.filter((id) => accepted.has(id)))
}

/** Ids of the accepted minions that are online, sorted. */
export function presentMinionIds(deps: AppDeps): Promise<string[]> {
  return idsWithKey(deps.db, 'accepted', true)
}

/** Values of the minion list's `status` filter. */
export const MINION_STATUSES = ['online', 'offline', 'accepted', 'pending', 'rejected', 'denied', 'healthy', 'changed', 'unhealthy', 'blocked'] as const

const STATUS_SQL: Record<(typeof MINION_STATUSES)[number], SQL> = {
  // Offline means an accepted minion that does not answer; a pending or rejected key is not part of the fleet yet.
  online: sql`${m.online} = 1`, offline: sql`${m.online} = 0 AND ${m.keyState} = 'accepted'`,
  accepted: sql`${m.keyState} = 'accepted'`, pending: sql`${m.keyState} = 'pending'`, rejected: sql`${m.keyState} = 'rejected'`, denied: sql`${m.keyState} = 'denied'`,
  healthy: sql`${m.lastRunStatus} = 'healthy'`, changed: sql`${m.lastRunStatus} = 'changed'`, unhealthy: sql`${m.lastRunStatus} = 'unhealthy'`,
  blocked: sql`${m.lastRunStatus} = 'blocked'`,
}

/** Whether the stored online flags are current: not while salt-api does not answer (the flags are then last known). */
const presenceKnown = (deps: AppDeps) => deps.salt?.presenceKnown() ?? true

function minionOut(r: MinionRow, known: boolean) {
  return {
    id: r.id, key_state: r.key_state, online: r.online === 1, presence: known ? (r.online === 1 ? 'online' : 'offline') : 'unknown',
    last_seen: isoOrNull(r.last_seen), os: r.os, osrelease: r.osrelease, ip: r.ip,
    salt_version: r.salt_version, last_run: r.last_run_status ? { status: r.last_run_status, completed_at: isoOrNull(r.last_run_completed_at) } : null,
  }
}

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

/** Lists minions by id, filtered by `q` (minionQuery: substring, salt glob or grain) and by status. */
export async function listMinions(deps: AppDeps, q: { q?: string; status?: (typeof MINION_STATUSES)[number]; source?: string; limit: number; offset: number }) {
  const where: SQL[] = []
  if (q.q) where.push(minionQuery(deps.db, q.q))
  if (q.status) where.push(STATUS_SQL[q.status])
  if (q.source !== undefined) where.push(seenThroughSql(q.source))
  const { total, rows } = await minionPage(deps.db, where, q.limit, q.offset)
  const known = presenceKnown(deps)
  const sources = await sourcesOf(deps.db, rows.map((r) => r.id))
  return { total, minions: rows.map((r) => ({ ...minionOut(r, known), sources: sources.get(r.id) ?? [] })) }
}

/** The salt sources each of these minions has been seen through, by name. */
export function minionSourcesOf(deps: AppDeps, ids: string[]) {
  return sourcesOf(deps.db, ids)
}

/** A salt source was removed: its minions are no longer seen through it (their jobs, runs and events keep its name). */
export async function forgetMinionSource(deps: AppDeps, source: string) {
  await forgetSource(deps.db, source)
}

/**
 * Notes that these minions were seen through a salt source (contract §15 "Several masters"): a minion of salt's
 * multi-master, seen through two, is one minion with both. In the ingest's transaction.
 */
export async function noteMinionSources(deps: AppDeps, tx: Queryable, ids: string[], source: string) {
  if (ids.length) await noteSeenThrough(tx, ids, source, deps.clock.now())
}

/** One minion with its grains; 404 when unknown. */
export async function minionDetail(deps: AppDeps, id: string) {
  const r = await minionRow(deps.db, id)
  if (!r) throw new NotFound('Minion')
  const sources = (await sourcesOf(deps.db, [id])).get(id) ?? []
  return { ...minionOut(r, presenceKnown(deps)), sources, key_fingerprint: r.key_fingerprint, grains: r.grains ? JSON.parse(r.grains) : {} }
}

/** Accepted minions per Salt version (from their grains; null when grains have not arrived), most first. */
export function minionVersions(deps: AppDeps) {
  return versionCounts(deps.db)
}

/** Minion ids by key state, each list sorted, and the fingerprints known of those keys (by id). */
export async function listKeys(deps: AppDeps) {
  const lists = { accepted: [] as string[], pending: [] as string[], rejected: [] as string[], denied: [] as string[] }
  // No prototype: a minion id such as `__proto__` is an own key like any other.
  const fingerprints: Record<string, string> = Object.create(null)
  for (const r of await keyRows(deps.db)) {
    const list = lists[r.key_state as keyof typeof lists]
    if (!list) continue
    list.push(r.id)
    if (r.key_fingerprint !== null) fingerprints[r.id] = r.key_fingerprint
  }
  return { ...lists, fingerprints }
}

/** Ids of the keys whose fingerprint is not stored yet, sorted. */
export function keysWithoutFingerprint(deps: AppDeps): Promise<string[]> {
  return idsWithoutFingerprint(deps.db)
}
