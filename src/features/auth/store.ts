/** SQL of the auth feature: browser sessions, API tokens, the auth_version counter and the login throttle's failures. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { authVersion, loginFailures, sessions, users } from '../../db/schema'

/** A stored session or API token (only the hash of its secret). */
export type SessionRow = Row<typeof sessions>
/** A session with the user it belongs to: what authenticating a request reads. */
export type SessionUser = Pick<SessionRow, 'kind' | 'expires_at' | 'user_id'> & { session_id: string } &
  Pick<Row<typeof users>, 'username' | 'display_name' | 'must_change_pw' | 'is_active'>

// Constant statements built once: http/route.ts reads auth_version on every authenticated request.
const VERSION = sql`SELECT ${authVersion.v} FROM ${authVersion}`

/** The counter every write to sessions, users, roles and grants moves (migration 0003's triggers); -1 when absent. */
export async function readAuthVersion(q: Queryable): Promise<number> {
  return (await q.row<Pick<Row<typeof authVersion>, 'v'>>(VERSION))?.v ?? -1
}

/** The session or token with this secret's hash, with its user; undefined when there is none. */
export const sessionByHash = (q: Queryable, hash: string) =>
  q.row<SessionUser>(sql`SELECT ${sessions.id} AS session_id, ${sessions.kind}, ${sessions.expiresAt}, ${users.id} AS user_id, ${users.username},
    ${users.displayName}, ${users.mustChangePw}, ${users.isActive}
    FROM ${sessions} JOIN ${users} ON ${users.id} = ${sessions.userId} WHERE ${sessions.tokenHash} = ${hash}`)

/** A session or token by id with its user's active flag; undefined when there is none. */
export const sessionById = (q: Queryable, id: string) =>
  q.row<Pick<SessionRow, 'user_id' | 'expires_at'> & Pick<Row<typeof users>, 'is_active'>>(
    sql`SELECT ${sessions.userId}, ${sessions.expiresAt}, ${users.isActive} FROM ${sessions} JOIN ${users} ON ${users.id} = ${sessions.userId}
      WHERE ${sessions.id} = ${id}`)

/** Stores a new session or token. */
export async function insertSession(q: Queryable, s: SessionRow) {
  await q.exec(sql`INSERT INTO ${sessions} (id, token_hash, user_id, kind, name, created_at, expires_at)
    VALUES (${s.id}, ${s.token_hash}, ${s.user_id}, ${s.kind}, ${s.name}, ${s.created_at}, ${s.expires_at})`)
}

/** Deletes one session or token by id. */
export const deleteSessionRow = (q: Queryable, id: string) => q.exec(sql`DELETE FROM ${sessions} WHERE ${sessions.id} = ${id}`)

/** Deletes a user's credentials: only browser sessions with `kind`, and all but `keep` when given. */
export const deleteSessionsOf = (q: Queryable, userId: string, opts: { kind?: SessionRow['kind']; keep?: string }) =>
  q.exec(sql`DELETE FROM ${sessions} WHERE ${sessions.userId} = ${userId}${opts.kind ? sql` AND ${sessions.kind} = ${opts.kind}` : sql.empty()}${
    opts.keep ? sql` AND ${sessions.id} <> ${opts.keep}` : sql.empty()}`)

/** How many live API tokens a user holds at `now`. */
export async function liveTokenCount(q: Queryable, userId: string, now: number): Promise<number> {
  const r = await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${sessions} WHERE ${sessions.userId} = ${userId} AND ${sessions.kind} = 'api_token'
    AND (${sessions.expiresAt} IS NULL OR ${sessions.expiresAt} > ${now})`)
  return r?.n ?? 0
}

/** A user's live API tokens at `now`, oldest first. */
export const liveTokens = (q: Queryable, userId: string, now: number) =>
  q.rows<Pick<SessionRow, 'id' | 'name' | 'created_at' | 'expires_at'>>(sql`SELECT ${sessions.id}, ${sessions.name}, ${sessions.createdAt}, ${sessions.expiresAt}
    FROM ${sessions} WHERE ${sessions.userId} = ${userId} AND ${sessions.kind} = 'api_token' AND (${sessions.expiresAt} IS NULL OR ${sessions.expiresAt} > ${now})
    ORDER BY ${sessions.createdAt}`)

/** Deletes one of a user's API tokens; resolves to the rows deleted (0 or 1). */
export const deleteToken = (q: Queryable, userId: string, id: string) =>
  q.exec(sql`DELETE FROM ${sessions} WHERE ${sessions.id} = ${id} AND ${sessions.userId} = ${userId} AND ${sessions.kind} = 'api_token'`)

/**
 * Holds the throttle's keys (a username and a client address) until the transaction `tx` ends, so concurrent attempts
 * on other instances count one at a time. PostgreSQL: transaction advisory locks, always the username's first (no two
 * attempts wait on each other in opposite orders); SQLite: its one writer serializes transactions already.
 */
export async function lockThrottleKeys(tx: Queryable, user: string, client: string) {
  if (tx.engine !== 'postgres') return
  // One round trip: PostgreSQL evaluates a select list left to right.
  await tx.exec(sql`SELECT pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${`user:${user}`})),
    pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${`client:${client}`}))`)
}
/** The advisory lock class of the login throttle's keys (leadership and migrations use others). */
const THROTTLE_LOCK_CLASS = 0x5a17dec2

/** Records one failed-login attempt for a username and a client address; returns the two rows' ids. */
export async function insertLoginFailures(q: Queryable, user: string, client: string, at: number): Promise<{ user: number; client: number }> {
  const rows = await q.rows<{ id: number; kind: string }>(sql`INSERT INTO ${loginFailures} (kind, key, at) VALUES ('user', ${user}, ${at}), ('client', ${client}, ${at}) RETURNING id, kind`)
  return { user: Number(rows.find((r) => r.kind === 'user')!.id), client: Number(rows.find((r) => r.kind === 'client')!.id) }
}

/** The times of a username's and a client's failures since `since`, each oldest first (one statement). */
export async function failuresSince(q: Queryable, user: string, client: string, since: number): Promise<{ user: number[]; client: number[] }> {
  const rows = await q.rows<{ kind: 'user' | 'client'; at: number }>(sql`SELECT ${loginFailures.kind}, ${loginFailures.at} FROM ${loginFailures}
    WHERE ((${loginFailures.kind} = 'user' AND ${loginFailures.key} = ${user}) OR (${loginFailures.kind} = 'client' AND ${loginFailures.key} = ${client}))
      AND ${loginFailures.at} > ${since}
    ORDER BY ${loginFailures.at}, ${loginFailures.id}`)
  return { user: rows.filter((r) => r.kind === 'user').map((r) => Number(r.at)), client: rows.filter((r) => r.kind === 'client').map((r) => Number(r.at)) }
}

/** Deletes failure rows by id (the client's count of an attempt that succeeded). */
export async function deleteLoginFailures(q: Queryable, ids: number[]) {
  for (const id of ids) await q.exec(sql`DELETE FROM ${loginFailures} WHERE ${loginFailures.id} = ${id}`)
}

/** Forgets a username's failures (a success resets its count). */
export const deleteUserFailures = (q: Queryable, user: string) => q.exec(sql`DELETE FROM ${loginFailures} WHERE ${loginFailures.kind} = 'user' AND ${loginFailures.key} = ${user}`)

/** Drops failures older than the window. */
export const pruneLoginFailures = (q: Queryable, before: number) => q.exec(sql`DELETE FROM ${loginFailures} WHERE ${loginFailures.at} <= ${before}`)
