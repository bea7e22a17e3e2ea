/**
 * The minion rows' SQL: key state, presence, grains and their summary columns, the list's filters (the grain search is
 * SQLite's json_each beside PostgreSQL's jsonb functions). Everything runs on the Queryable it is handed.
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import { twin, type Engine, type Queryable } from '../../db/engine'
import { untilCommit } from '../../db/until-commit'
import type { Row } from '../../db/row'
import { minions as m } from '../../db/schema'
import { $, prepare, type Pipeline, type Prepared } from '../../db/prepared'
import { MultiRow } from '../../db/multi-row'
import { sourcesColumn } from './sources-store'

/** A row of the minion list. */
export type MinionRow = Pick<Row<typeof m>, 'id' | 'key_state' | 'online' | 'last_seen' | 'os' | 'osrelease' | 'ip' | 'salt_version' | 'last_run_status' | 'last_run_completed_at'>

const SUMMARY = sql`${m.id}, ${m.keyState}, ${m.online}, ${m.lastSeen}, ${m.os}, ${m.osrelease}, ${m.ip}, ${m.saltVersion}, ${m.lastRunStatus}, ${m.lastRunCompletedAt}`

/** Creates an empty minion row when the id is new. */
export function insertMinion(q: Queryable, id: string, now: number): Promise<number> {
  return q.exec(sql`INSERT INTO ${m} (id, updated_at) VALUES (${id}, ${now}) ON CONFLICT (id) DO NOTHING`)
}

/**
 * insertMinion prepared on `q` for a per-minion loop (the inventory writer's flush): run it with (id, now); synchronous
 * on SQLite as the flush's other statements are.
 */
export function prepareInsertMinion(q: Queryable): Prepared {
  return prepare(q, sql`INSERT INTO ${m} (id, updated_at) VALUES (${$(1)}, ${$(2)}) ON CONFLICT (id) DO NOTHING`)
}

/**
 * insertMinion for many ids, gathered and sent a thousand rows per statement into `p` (PostgreSQL's inventory flush,
 * db/multi-row.ts): add (id, now) per minion, then send().
 */
export function insertMinionRows(q: Queryable, p: Pipeline): MultiRow {
  return new MultiRow(q, p, ['text', 'bigint'], (values) => sql`INSERT INTO ${m} (id, updated_at) VALUES ${values} ON CONFLICT (id) DO NOTHING`, 1024)
}

/** The grains and the summary columns taken from them, as one minion's row gets them. */
export type GrainsColumns = Pick<Row<typeof m>, 'grains' | 'os' | 'osrelease' | 'ip' | 'salt_version' | 'os_family'>

/** Stores a minion's grains and their summary columns. */
export function updateGrains(q: Queryable, id: string, g: GrainsColumns, now: number): Promise<number> {
  return q.exec(sql`UPDATE ${m} SET grains = ${g.grains}, os = ${g.os}, osrelease = ${g.osrelease}, ip = ${g.ip}, salt_version = ${g.salt_version},
    os_family = ${g.os_family}, updated_at = ${now} WHERE ${m.id} = ${id}`)
}

/** Ids of the minions with this key state (accepted: also online only), sorted. */
export async function idsWithKey(q: Queryable, state: string, onlineOnly = false): Promise<string[]> {
  const online = onlineOnly ? sql` AND ${m.online} = 1` : sql.empty()
  return (await q.rows<{ id: string }>(sql`SELECT ${m.id} FROM ${m} WHERE ${m.keyState} = ${state}${online} ORDER BY ${m.id}`)).map((r) => r.id)
}

/** Which of these ids have an accepted key. */
export async function acceptedOf(q: Queryable, ids: string[]): Promise<Set<string>> {
  const out = new Set<string>()
  // In slices: a statement takes a bounded number of parameters on either engine.
  for (let i = 0; i < ids.length; i += 500) {
    const slice = ids.slice(i, i + 500)
    for (const r of await q.rows<{ id: string }>(sql`SELECT ${m.id} FROM ${m} WHERE ${m.id} IN ${slice} AND ${m.keyState} = 'accepted'`)) out.add(r.id)
  }
  return out
}

/** Ids of the minions with any key state. */
export async function idsWithAnyKey(q: Queryable): Promise<string[]> {
  return (await q.rows<{ id: string }>(sql`SELECT ${m.id} FROM ${m} WHERE ${m.keyState} IS NOT NULL`)).map((r) => r.id)
}

/** Ids of the accepted minions flagged online (unordered). */
export async function onlineAccepted(q: Queryable): Promise<string[]> {
  return (await q.rows<{ id: string }>(sql`SELECT ${m.id} FROM ${m} WHERE ${m.online} = 1 AND ${m.keyState} = 'accepted'`)).map((r) => r.id)
}

/** A minion's key state; undefined when there is no such minion. */
export async function keyStateOf(q: Queryable, id: string): Promise<Pick<Row<typeof m>, 'key_state'> | undefined> {
  return q.row(sql`SELECT ${m.keyState} FROM ${m} WHERE ${m.id} = ${id}`)
}

/**
 * Sets a key state: a minion without a key is not online; `sameKey` keeps the stored fingerprint (accepting or
 * rejecting moves the same key file), otherwise it goes.
 */
export function setKeyState(q: Queryable, id: string, state: string | null, sameKey: boolean, now: number): Promise<number> {
  return q.exec(sql`UPDATE ${m} SET key_state = ${state}, online = CASE WHEN ${state === null ? 1 : 0} = 1 THEN 0 ELSE ${m.online} END,
    key_fingerprint = CASE WHEN ${sameKey ? 1 : 0} = 1 THEN ${m.keyFingerprint} END, updated_at = ${now} WHERE ${m.id} = ${id}`)
}

/** Stores a key's fingerprint when the stored key is in `state` and the fingerprint differs. */
export function setFingerprint(q: Queryable, id: string, state: string | null, fingerprint: string): Promise<number> {
  return q.exec(sql`UPDATE ${m} SET key_fingerprint = ${fingerprint} WHERE ${m.id} = ${id} AND ${m.keyState} = ${state}
    AND (${m.keyFingerprint} IS NULL OR ${m.keyFingerprint} <> ${fingerprint})`)
}

/** A minion's online flag; undefined when there is no such minion. */
export async function onlineOf(q: Queryable, id: string): Promise<Pick<Row<typeof m>, 'online'> | undefined> {
  return q.row(sql`SELECT ${m.online} FROM ${m} WHERE ${m.id} = ${id}`)
}

/** A minion seen at `ts`: online, last_seen moved forward, no longer missing (created when new). */
export async function markSeen(q: Queryable, id: string, ts: number): Promise<void> {
  const latest = twin(q, { sqlite: sql`max(coalesce(${m.lastSeen}, 0), ${ts})`, postgres: sql`greatest(coalesce(${m.lastSeen}, 0), ${ts})` })
  await q.exec(sql`INSERT INTO ${m} (id, online, last_seen, updated_at) VALUES (${id}, 1, ${ts}, ${ts})
    ON CONFLICT (id) DO UPDATE SET online = 1, last_seen = ${latest}, offline_since = NULL`)
}

/** Rows per statement of the presence list's reads and writes: a bounded number of parameters on either engine. */
const SLICE = 500

/** The online flags of these minions (those that exist), in statements of SLICE ids. */
export async function onlineOfMany(q: Queryable, ids: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (let i = 0; i < ids.length; i += SLICE)
    for (const r of await q.rows<Pick<Row<typeof m>, 'id' | 'online'>>(sql`SELECT ${m.id}, ${m.online} FROM ${m} WHERE ${m.id} IN ${ids.slice(i, i + SLICE)}`)) out.set(r.id, r.online)
  return out
}

/** These minions seen at `ts` (markSeen for each), in statements of SLICE rows. */
export async function markSeenMany(q: Queryable, ids: string[], ts: number): Promise<void> {
  const latest = twin(q, { sqlite: sql`max(coalesce(${m.lastSeen}, 0), excluded.last_seen)`, postgres: sql`greatest(coalesce(${m.lastSeen}, 0), excluded.last_seen)` })
  for (let i = 0; i < ids.length; i += SLICE) {
    const rows = ids.slice(i, i + SLICE).map((id) => sql`(${id}, 1, ${ts}, ${ts})`)
    await q.exec(sql`INSERT INTO ${m} (id, online, last_seen, updated_at) VALUES ${sql.join(rows, sql`, `)}
      ON CONFLICT (id) DO UPDATE SET online = 1, last_seen = ${latest}, offline_since = NULL`)
  }
}

/** A minion first seen missing at `ts`. */
export function markMissing(q: Queryable, id: string, ts: number): Promise<number> {
  return q.exec(sql`UPDATE ${m} SET online = 0, offline_since = ${ts}, updated_at = ${ts} WHERE ${m.id} = ${id}`)
}

/** Whether a minion row exists. */
export async function minionExists(q: Queryable, id: string): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS n FROM ${m} WHERE ${m.id} = ${id}`))
}

/** How many minions match `where`, and a page of them by id, each with its salt sources (sources-store.ts). */
export async function minionPage(db: Engine, where: SQL[], limit: number, offset: number): Promise<{ total: number; rows: (MinionRow & { sources: string | null })[] }> {
  const w = where.length ? sql` WHERE ${sql.join(where, sql` AND `)}` : sql.empty()
  const total = where.length ? await countMinions(db, w) : await minionCount(db)
  const rows = await db.rows<MinionRow & { sources: string | null }>(sql`SELECT ${SUMMARY}, ${sourcesColumn} FROM ${m}${w} ORDER BY ${m.id} LIMIT ${limitOf(limit)} OFFSET ${offset}`)
  return { total, rows }
}

/** How many minions match the WHERE clause `w`. */
async function countMinions(q: Queryable, w: SQL): Promise<number> {
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${m}${w}`))!.n
}

/** How many minions there are, kept until the next commit (the unfiltered list's total). */
const minionCount = untilCommit((db) => countMinions(db, sql.empty()))

/** One minion with its grains, key fingerprint and salt sources (as `sourcesColumn` reads them). */
export function minionRow(q: Queryable, id: string): Promise<(MinionRow & Pick<Row<typeof m>, 'grains' | 'key_fingerprint'> & { sources: string | null }) | undefined> {
  return q.row(sql`SELECT ${SUMMARY}, ${m.keyFingerprint}, ${m.grains}, ${sourcesColumn} FROM ${m} WHERE ${m.id} = ${id}`)
}

/** Accepted minions per Salt version, most first (unknown first among equals: NULLS FIRST is SQLite's order, said for PostgreSQL). */
export function versionCounts(q: Queryable): Promise<{ version: string | null; minions: number }[]> {
  return q.rows(sql`SELECT ${m.saltVersion} AS version, count(*) AS minions FROM ${m} WHERE ${m.keyState} = 'accepted' GROUP BY ${m.saltVersion}
    ORDER BY minions DESC, version NULLS FIRST`)
}

/** Every minion with a key: id, key state and fingerprint, by state then id. */
export function keyRows(q: Queryable): Promise<Pick<Row<typeof m>, 'id' | 'key_state' | 'key_fingerprint'>[]> {
  return q.rows(sql`SELECT ${m.id}, ${m.keyState}, ${m.keyFingerprint} FROM ${m} WHERE ${m.keyState} IS NOT NULL ORDER BY ${m.keyState}, ${m.id}`)
}

/** Ids of the keys without a stored fingerprint, sorted. */
export async function idsWithoutFingerprint(q: Queryable): Promise<string[]> {
  return (await q.rows<{ id: string }>(sql`SELECT ${m.id} FROM ${m} WHERE ${m.keyState} IS NOT NULL AND ${m.keyFingerprint} IS NULL ORDER BY ${m.id}`)).map((r) => r.id)
}
