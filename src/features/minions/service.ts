/** Minion rows: grains written by the grains poller, the minion list and detail, and the key list. */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { containsPattern } from '../../lib/sql'
import { hasGlobChars, sqliteGlob } from '../../lib/glob'
import { NotFound } from '../../lib/errors'
import { isoOrNull } from '../../lib/clock'
import { boundDepth, MAX_GRAIN_DEPTH } from './grains-depth'

/** Creates an empty minion row when the id is new. */
export function ensureMinion(deps: AppDeps, id: string) {
  deps.db.$client.query('INSERT INTO minions (id, updated_at) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING').run(id, deps.clock.now())
}

const str = (v: unknown, max = 255) => (typeof v === 'string' ? v.slice(0, max) : typeof v === 'number' ? String(v) : null)

/** The address shown for a minion: its first non-loopback IPv4 grain. */
function firstIp(grains: Record<string, unknown>): string | null {
  const v4 = Array.isArray(grains.ipv4) ? (grains.ipv4 as unknown[]) : []
  const ip = v4.find((a) => typeof a === 'string' && !a.startsWith('127.'))
  return typeof ip === 'string' ? ip : null
}

/** Stores the grains of many minions in one transaction, with the summary columns taken from them. */
export function recordGrains(deps: AppDeps, facts: { id: string; grains: Record<string, unknown> }[]) {
  const db = deps.db.$client
  const now = deps.clock.now()
  db.transaction(() => {
    for (const { id, grains: given } of facts) {
      ensureMinion(deps, id)
      // One minion's document nested past what SQLite's JSON functions read must not break them for the fleet.
      const { grains: g, cut } = boundDepth(given)
      if (cut) deps.log.warn('grains nested too deep: cut', { minion_id: id, max_depth: MAX_GRAIN_DEPTH })
      db.query('UPDATE minions SET grains = ?2, os = ?3, osrelease = ?4, ip = ?5, salt_version = ?6, os_family = ?7, updated_at = ?8 WHERE id = ?1').run(
        id, JSON.stringify(g), str(g.os), str(g.osrelease), firstIp(g), str(g.saltversion), str(g.os_family), now,
      )
    }
  })()
}

/** Ids of the accepted minions, sorted. */
export function acceptedMinionIds(deps: AppDeps): string[] {
  return deps.db.$client.query<{ id: string }, []>("SELECT id FROM minions WHERE key_state = 'accepted' ORDER BY id").all().map((r) => r.id)
}

/** Which of these minions have an accepted key now. */
export function acceptedAmong(deps: AppDeps, ids: string[]): Set<string> {
  const q = deps.db.$client.prepare<{ n: number }, [string]>("SELECT 1 AS n FROM minions WHERE id = ?1 AND key_state = 'accepted'")
  return new Set(ids.filter((id) => q.get(id)))
}

/** Ids of the accepted minions that are online, sorted. */
export function presentMinionIds(deps: AppDeps): string[] {
  return deps.db.$client.query<{ id: string }, []>("SELECT id FROM minions WHERE key_state = 'accepted' AND online = 1 ORDER BY id").all().map((r) => r.id)
}

/** Values of the minion list's `status` filter. */
export const MINION_STATUSES = ['online', 'offline', 'accepted', 'pending', 'rejected', 'denied', 'healthy', 'changed', 'unhealthy', 'blocked'] as const

const STATUS_SQL: Record<(typeof MINION_STATUSES)[number], string> = {
  // Offline means an accepted minion that does not answer; a pending or rejected key is not part of the fleet yet.
  online: 'online = 1', offline: "online = 0 AND key_state = 'accepted'",
  accepted: "key_state = 'accepted'", pending: "key_state = 'pending'", rejected: "key_state = 'rejected'", denied: "key_state = 'denied'",
  healthy: "last_run_status = 'healthy'", changed: "last_run_status = 'changed'", unhealthy: "last_run_status = 'unhealthy'", blocked: "last_run_status = 'blocked'",
}

const SUMMARY = 'id, key_state, online, last_seen, os, osrelease, ip, salt_version, last_run_status, last_run_completed_at'
/** A row of the minion list (SUMMARY). */
interface MinionRow {
  id: string
  key_state: string | null
  online: number
  last_seen: number | null
  os: string | null
  osrelease: string | null
  ip: string | null
  salt_version: string | null
  last_run_status: string | null
  last_run_completed_at: number | null
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
/** A grain value as salt's grain matcher compares it (Python's str() lowered): JSON true/false/null as Python prints them. */
const grainText = (t: string) => `CASE ${t}.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'none' ELSE lower(${t}.value) END`

/**
 * The minion list's `q` as an SQL condition with its arguments (bound, never spliced):
 * - `G@name:glob` or `name:glob` (name a word): minions whose top-level grain `name` matches the glob, case-insensitively
 *   (salt folds both sides); a list grain matches when any element does; `G@name` alone: minions that have the grain;
 * - text with `*`, `?` or `[`: salt's glob on the whole id, case-sensitive;
 * - anything else: a case-insensitive substring of the id.
 */
export function minionQuery(q: string): { sql: string; args: string[] } {
  const grain = q.startsWith('G@') ? q.slice(2) : null
  const colon = (grain ?? q).indexOf(':')
  const name = colon < 0 ? grain : (grain ?? q).slice(0, colon)
  if (name !== null && (grain !== null || GRAIN_NAME.test(name))) {
    const each = 'SELECT 1 FROM json_each(minions.grains) AS g WHERE g.key = ?'
    if (colon < 0) return { sql: `EXISTS (${each})`, args: [name] }
    const glob = sqliteGlob(asciiLower((grain ?? q).slice(colon + 1)))
    if (glob === null) return { sql: '0', args: [] }
    const value = `CASE WHEN g.type = 'array' THEN EXISTS (SELECT 1 FROM json_each(g.value) AS e WHERE e.type <> 'object' AND ${grainText('e')} GLOB ?) WHEN g.type = 'object' THEN 0 ELSE ${grainText('g')} GLOB ? END`
    return { sql: `EXISTS (${each} AND ${value})`, args: [name, glob, glob] }
  }
  if (hasGlobChars(q)) {
    const glob = sqliteGlob(q)
    return glob === null ? { sql: '0', args: [] } : { sql: 'id GLOB ?', args: [glob] }
  }
  return { sql: `id LIKE ? ESCAPE '\\'`, args: [containsPattern(q)] }
}

/** Lists minions by id, filtered by `q` (minionQuery: substring, salt glob or grain) and by status. */
export function listMinions(deps: AppDeps, q: { q?: string; status?: (typeof MINION_STATUSES)[number]; limit: number; offset: number }) {
  const where: string[] = []
  const args: string[] = []
  if (q.q) {
    const m = minionQuery(q.q)
    where.push(m.sql)
    args.push(...m.args)
  }
  if (q.status) where.push(STATUS_SQL[q.status])
  const w = where.length ? `WHERE ${where.join(' AND ')}` : ''
  const db = deps.db.$client
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM minions ${w}`).get(...args)!.n
  const rows = db.query<MinionRow, SQLQueryBindings[]>(`SELECT ${SUMMARY} FROM minions ${w} ORDER BY id LIMIT ${q.limit} OFFSET ${q.offset}`).all(...args)
  const known = presenceKnown(deps)
  return { total, minions: rows.map((r) => minionOut(r, known)) }
}

/** One minion with its grains; 404 when unknown. */
export function minionDetail(deps: AppDeps, id: string) {
  const r = deps.db.$client
    .query<MinionRow & { grains: string | null; key_fingerprint: string | null }, [string]>(`SELECT ${SUMMARY}, key_fingerprint, grains FROM minions WHERE id = ?1`)
    .get(id)
  if (!r) throw new NotFound('Minion')
  return { ...minionOut(r, presenceKnown(deps)), key_fingerprint: r.key_fingerprint, grains: r.grains ? JSON.parse(r.grains) : {} }
}

/** Accepted minions per Salt version (from their grains; null when grains have not arrived), most first. */
export function minionVersions(deps: AppDeps) {
  return deps.db.$client
    .query<{ version: string | null; minions: number }, []>("SELECT salt_version AS version, count(*) AS minions FROM minions WHERE key_state = 'accepted' GROUP BY salt_version ORDER BY minions DESC, version")
    .all()
}

/** Minion ids by key state, each list sorted, and the fingerprints known of those keys (by id). */
export function listKeys(deps: AppDeps) {
  const lists = { accepted: [] as string[], pending: [] as string[], rejected: [] as string[], denied: [] as string[] }
  // No prototype: a minion id such as `__proto__` is an own key like any other.
  const fingerprints: Record<string, string> = Object.create(null)
  const rows = deps.db.$client
    .query<{ id: string; key_state: keyof typeof lists; key_fingerprint: string | null }, []>('SELECT id, key_state, key_fingerprint FROM minions WHERE key_state IS NOT NULL ORDER BY key_state, id')
    .all()
  for (const r of rows) {
    const list = lists[r.key_state]
    if (!list) continue
    list.push(r.id)
    if (r.key_fingerprint !== null) fingerprints[r.id] = r.key_fingerprint
  }
  return { ...lists, fingerprints }
}

/** Ids of the keys whose fingerprint is not stored yet, sorted. */
export function keysWithoutFingerprint(deps: AppDeps): string[] {
  return deps.db.$client.query<{ id: string }, []>('SELECT id FROM minions WHERE key_state IS NOT NULL AND key_fingerprint IS NULL ORDER BY id').all().map((r) => r.id)
}
