/** Minion rows: grains written by the grains poller, the minion list and detail, and the key list. */
import type { SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { NotFound } from '../../lib/errors'
import { isoOrNull } from '../../lib/clock'
import { boundDepth, MAX_GRAIN_DEPTH } from './grains-depth'
import { allSightings, forgetSource, noteSeenThrough, seenThroughSql, sourceNames, sourcesOf } from './sources-store'
import { DEFAULT_SOURCE } from '../salt-sources/schema'
import {
  acceptedOf, idsWithKey, idsWithoutFingerprint, insertMinion, keyRows, minionPage, minionRow, updateGrains, versionCounts, type MinionRow,
} from './store'
import { minionQuery, statusCondition, type MinionStatus } from './filter-store'

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

export { MINION_STATUSES } from './filter-store'

/**
 * Whether a minion's stored online flag is current, from the salt sources it is seen through: not while none of their
 * salt-apis answers (the flag is then last known; a minion of two masters stays known through the one that answers).
 * A minion seen through no source yet is `default`'s; a source not running on this instance counts as known.
 */
function presenceKnown(deps: AppDeps): (sources: string[]) => boolean {
  const salt = deps.salt
  if (!salt) return () => true
  // `default` first: this side itself.
  const known = new Map(salt.sources().map((s) => [s.source, s.presenceKnown()]))
  return (sources) => (sources.length ? sources : [DEFAULT_SOURCE]).some((n) => known.get(n) ?? true)
}

/** A minion as the API shows it, with the salt sources it is seen through. */
function minionOut(r: MinionRow, known: boolean, sources: string[]) {
  return {
    id: r.id, key_state: r.key_state, online: r.online === 1, presence: known ? (r.online === 1 ? 'online' : 'offline') : 'unknown',
    last_seen: isoOrNull(r.last_seen), os: r.os, osrelease: r.osrelease, ip: r.ip,
    salt_version: r.salt_version, last_run: r.last_run_status ? { status: r.last_run_status, completed_at: isoOrNull(r.last_run_completed_at) } : null,
    sources,
  }
}

/** Lists minions by id, filtered by `q` (minionQuery: substring, salt glob or grain) and by status. */
export async function listMinions(deps: AppDeps, q: { q?: string; status?: MinionStatus; source?: string; limit: number; offset: number }) {
  const where: SQL[] = []
  if (q.q) where.push(minionQuery(deps.db, q.q))
  if (q.status) where.push(statusCondition(q.status))
  if (q.source !== undefined) where.push(seenThroughSql(q.source))
  const { total, rows } = await minionPage(deps.db, where, q.limit, q.offset)
  const known = presenceKnown(deps)
  // Most rows of a page have the same sources (`default` alone): each list is decided once per page.
  const lists = new Map<string | null, { sources: string[]; known: boolean }>()
  return {
    total,
    minions: rows.map((r) => {
      let l = lists.get(r.sources)
      if (!l) {
        const sources = sourceNames(r.sources)
        lists.set(r.sources, (l = { sources, known: known(sources) }))
      }
      return minionOut(r, l.known, l.sources)
    }),
  }
}

/** The salt sources each of these minions has been seen through, by name. */
export function minionSourcesOf(deps: AppDeps, ids: string[]) {
  return sourcesOf(deps.db, ids)
}

/** A salt source was removed: its minions are no longer seen through it (their jobs, runs and events keep its name). */
export async function forgetMinionSource(deps: AppDeps, source: string) {
  // One transaction: the sightings and the minions' lists of them change together.
  await deps.db.tx((tx) => forgetSource(tx, source))
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
  // The list's column, so the detail and the list say the same.
  const sources = sourceNames(r.sources)
  return { ...minionOut(r, presenceKnown(deps)(sources), sources), key_fingerprint: r.key_fingerprint, grains: r.grains ? JSON.parse(r.grains) : {} }
}

/** Accepted minions per Salt version (from their grains; null when grains have not arrived), most first. */
export function minionVersions(deps: AppDeps) {
  return versionCounts(deps.db)
}

/** Minion ids by key state, each list sorted, and the fingerprints known of those keys (by id). */
export async function listKeys(deps: AppDeps, source?: string) {
  const lists = { accepted: [] as string[], pending: [] as string[], rejected: [] as string[], denied: [] as string[] }
  // No prototype: a minion id such as `__proto__` is an own key like any other.
  const fingerprints: Record<string, string> = Object.create(null)
  const sources: Record<string, string[]> = Object.create(null)
  const seen = await allSightings(deps.db)
  for (const r of await keyRows(deps.db)) {
    const list = lists[r.key_state as keyof typeof lists]
    const through = seen.get(r.id) ?? []
    if (!list || (source !== undefined && !through.includes(source))) continue
    list.push(r.id)
    if (r.key_fingerprint !== null) fingerprints[r.id] = r.key_fingerprint
    sources[r.id] = through
  }
  return { ...lists, fingerprints, sources }
}

/** Ids of the keys whose fingerprint is not stored yet, sorted. */
export function keysWithoutFingerprint(deps: AppDeps): Promise<string[]> {
  return idsWithoutFingerprint(deps.db)
}
