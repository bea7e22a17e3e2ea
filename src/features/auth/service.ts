/** Passwords, login, sessions, API tokens and throttling. */
import type { AppDeps } from '../../deps'
import { Conflict, NotFound } from '../../lib/errors'
import { iso, isoOrNull } from '../../lib/clock'
import { newId, newToken, tokenHash } from '../../lib/ids'
import type { Grant } from '../roles/service'
import { grantsOfUser } from '../roles/store'
import { userById } from '../users/store'
import { authChanged } from './changes'
import { untilCommit } from '../../db/until-commit'
import {
  deleteLoginFailures, deleteSessionRow, deleteSessionsOf, deleteToken, deleteUserFailures, failuresSince, insertLoginFailures, insertSession,
  liveTokenCount, liveTokens, lockThrottleKeys, pruneLoginFailures, readAuthVersion, sessionByHash, sessionById,
} from './store'

/** The caller of a request, or null on public routes. */
export type Principal = {
  userId: string
  username: string
  displayName: string
  mustChangePw: boolean
  grants: Grant[]
  sessionId: string
  via: 'cookie' | 'bearer'
  /** A browser session from login, or an API token made for a script. */
  kind: 'session' | 'api_token'
} | null

/** Hashes a password with Argon2id. */
export function hashPassword(deps: AppDeps, password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: deps.config.passwordMemoryKib, timeCost: 2 })
}

let dummyHash: Promise<string> | null = null
/** Checks a password against a hash; with no hash, burns the same time against a dummy so timing tells nothing. */
export async function verifyPassword(deps: AppDeps, password: string, hash: string | null): Promise<boolean> {
  if (hash) return Bun.password.verify(password, hash)
  dummyHash ??= hashPassword(deps, 'saltdeck-dummy-password')
  await Bun.password.verify(password, await dummyHash)
  return false
}

/** The union of a user's grants, sorted by verb then glob, without duplicates. */
export const grantsOf = (deps: AppDeps, userId: string): Promise<Grant[]> => grantsOfUser(deps.db, userId)

interface Cached {
  principal: NonNullable<Principal>
  expiresAt: number | null
  version: number
}
const authCaches = new WeakMap<AppDeps, Map<string, Cached>>()
const CACHE_MAX = 10_000

/**
 * Resolves a session or API token to its user; null when unknown, expired or the user is inactive. Results are cached
 * per token while auth_version (bumped by triggers on every relevant write, from any process) stays the same.
 */
export async function authenticate(deps: AppDeps, token: string, via: 'cookie' | 'bearer'): Promise<Principal> {
  let cache = authCaches.get(deps)
  if (!cache) authCaches.set(deps, (cache = new Map()))
  const version = await authVersion(deps)
  const hit = cache.get(token)
  const now = deps.clock.now()
  if (hit && hit.version === version) {
    if (hit.expiresAt !== null && hit.expiresAt <= now) return null
    return hit.principal.via === via ? hit.principal : { ...hit.principal, via }
  }
  const p = await lookup(deps, token, via)
  if (p) {
    if (cache.size >= CACHE_MAX) cache.clear()
    cache.set(token, { principal: p.principal, expiresAt: p.expiresAt, version })
  }
  return p?.principal ?? null
}

/** A cache miss: the session and its user (one statement), then the user's grants (another). */
async function lookup(deps: AppDeps, token: string, via: 'cookie' | 'bearer'): Promise<{ principal: NonNullable<Principal>; expiresAt: number | null } | null> {
  const row = await sessionByHash(deps.db, tokenHash(token))
  if (!row || row.is_active !== 1 || (row.expires_at !== null && row.expires_at <= deps.clock.now())) return null
  return {
    expiresAt: row.expires_at,
    principal: {
      userId: row.user_id,
      username: row.username,
      displayName: row.display_name,
      mustChangePw: row.must_change_pw === 1,
      grants: await grantsOf(deps, row.user_id),
      sessionId: row.session_id,
      via,
      kind: row.kind,
    },
  }
}

/**
 * The body of me, from the authenticated principal: it was read with the session and is current, because every write
 * to users, roles and grants bumps auth_version and so drops the cached principal.
 */
export function principalSummary(p: NonNullable<Principal>) {
  return { username: p.username, display_name: p.displayName, must_change_pw: p.mustChangePw, permissions: p.grants }
}

/** The body of login. */
export async function userSummary(deps: AppDeps, userId: string) {
  const u = await userById(deps.db, userId)
  if (!u) throw new NotFound('User')
  return { username: u.username, display_name: u.display_name, must_change_pw: u.must_change_pw === 1, permissions: u.is_active === 1 ? await grantsOf(deps, u.id) : [] }
}

const WINDOW_MS = 15 * 60_000
const PER_USER = 5
const PER_CLIENT = 20

/** One attempt counted by the throttle: its failure rows, until it proves otherwise (`succeed`). */
export interface Attempt {
  user: number
  client: number
}

/**
 * Failed-login counters per username and per client address over a sliding 15-minute window, kept in the database so
 * every instance behind a load balancer counts the same attempts (contract §15).
 */
export class LoginThrottle {
  constructor(private readonly deps: AppDeps) {}

  /**
   * Counts an attempt as a failure before anything else is awaited, so concurrent guesses all count: in one
   * transaction holding the username and the client (every instance's attempts on them wait their turn), the recent
   * failures decide and, when under the limits, this attempt is recorded. Returns the seconds to wait when this
   * username or client is over its limit (the attempt is then not counted), else 0 and the attempt.
   */
  async admit(user: string, client: string, now: number): Promise<{ wait: number; attempt: Attempt | null }> {
    await pruneLoginFailures(this.deps.db, now - WINDOW_MS)
    return this.deps.db.tx(async (tx) => {
      await lockThrottleKeys(tx, user, client)
      const { user: u, client: c } = await failuresSince(tx, user, client, now - WINDOW_MS)
      let until = 0
      if (u.length >= PER_USER) until = Math.max(until, u[u.length - PER_USER]! + WINDOW_MS)
      if (c.length >= PER_CLIENT) until = Math.max(until, c[c.length - PER_CLIENT]! + WINDOW_MS)
      if (until) return { wait: Math.max(1, Math.ceil((until - now) / 1000)), attempt: null }
      return { wait: 0, attempt: await insertLoginFailures(tx, user, client, now) }
    })
  }

  /** A success resets the username's count and takes back the client's count of this attempt. */
  async succeed(user: string, attempt: Attempt) {
    await deleteUserFailures(this.deps.db, user)
    await deleteLoginFailures(this.deps.db, [attempt.client])
  }
}

const throttles = new WeakMap<AppDeps, LoginThrottle>()
/** The throttle of one app instance (its counts are the database's). */
export const throttleOf = (deps: AppDeps) => {
  let t = throttles.get(deps)
  if (!t) throttles.set(deps, (t = new LoginThrottle(deps)))
  return t
}

/** Creates a browser session; returns the secret token (only its hash is stored). */
export async function createSession(deps: AppDeps, userId: string): Promise<{ token: string; maxAge: number }> {
  const token = newToken()
  const ttl = deps.config.sessionTtlMinutes * 60
  const now = deps.clock.now()
  await insertSession(deps.db, { id: newId(), token_hash: tokenHash(token), user_id: userId, kind: 'session', name: null, created_at: now, expires_at: now + ttl * 1000 })
  return { token, maxAge: ttl }
}

/** Deletes one session or token by id. */
export async function deleteSession(deps: AppDeps, sessionId: string) {
  await deleteSessionRow(deps.db, sessionId)
  authChanged(deps)
}

/** Ends a user's browser sessions, except `keep` when given. */
export async function endSessions(deps: AppDeps, userId: string, keep?: string) {
  await deleteSessionsOf(deps.db, userId, { kind: 'session', keep })
  authChanged(deps)
}

/** Ends every credential of a user, browser sessions and API tokens alike (a password change), except `keep` when given. */
export async function endCredentials(deps: AppDeps, userId: string, keep?: string) {
  await deleteSessionsOf(deps.db, userId, { keep })
  authChanged(deps)
}

/** Live API tokens one user may hold: a leaked session cannot mint credentials without end. */
export const MAX_API_TOKENS = 100

/** Creates an API token for scripts; the secret is returned once. 409 past MAX_API_TOKENS live ones. */
export async function createApiToken(deps: AppDeps, userId: string, name: string, expiresInDays: number | null | undefined) {
  const now = deps.clock.now()
  if ((await liveTokenCount(deps.db, userId, now)) >= MAX_API_TOKENS) throw new Conflict(`Too many API tokens (${MAX_API_TOKENS}); revoke one first`)
  const token = newToken()
  const expiresAt = expiresInDays ? now + expiresInDays * 86_400_000 : null
  const id = newId()
  await insertSession(deps.db, { id, token_hash: tokenHash(token), user_id: userId, kind: 'api_token', name, created_at: now, expires_at: expiresAt })
  return { id, name, token, expires_at: isoOrNull(expiresAt) }
}

/** Lists the caller's live API tokens (never their secrets). */
export async function listApiTokens(deps: AppDeps, userId: string) {
  const rows = await liveTokens(deps.db, userId, deps.clock.now())
  const tokens = rows.map((r) => ({ id: r.id, name: r.name, created_at: iso(r.created_at), expires_at: isoOrNull(r.expires_at) }))
  return { total: tokens.length, tokens }
}

/** Revokes one of the caller's API tokens. */
export async function revokeApiToken(deps: AppDeps, userId: string, id: string) {
  if ((await deleteToken(deps.db, userId, id)) === 0) throw new NotFound('Token')
  authChanged(deps)
}

/** What a session or token still grants now: its grants and expiry, or null once it ended or its user is inactive or gone. */
export async function sessionStanding(deps: AppDeps, sessionId: string): Promise<{ grants: Grant[]; expiresAt: number | null } | null> {
  const row = await sessionById(deps.db, sessionId)
  if (!row || row.is_active !== 1 || (row.expires_at !== null && row.expires_at <= deps.clock.now())) return null
  return { grants: await grantsOf(deps, row.user_id), expiresAt: row.expires_at }
}

/** auth_version, kept until the next commit (db/until-commit.ts): read on every authenticated request. */
const keptAuthVersion = untilCommit(readAuthVersion)
/** The counter every write to sessions, users, roles and grants moves, from any process (migration 0003's triggers). */
export const authVersion = (deps: AppDeps) => keptAuthVersion(deps.db)
