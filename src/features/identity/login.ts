/**
 * POST /api/auth/login's check: a local user of that name first, otherwise the directory (LDAP, when enabled). One
 * throttle and one 401 sentence for every failure; the log and the audit entry say which failure it was.
 */
import type { AppDeps } from '../../deps'
import { Throttled, Unauthenticated } from '../../lib/errors'
import { createSession, throttleOf, verifyPassword } from '../auth/service'
import { userByName } from '../users/service'
import { ldapAuthenticate } from './ldap'
import { providerConfig } from './service'
import { recordSignIn, signInDirectoryUser } from './signin'

const INVALID = 'Invalid credentials'

/** Checks a user name and password and starts a session; 401, 403 (no mapped role) or 429 otherwise. */
export async function passwordSignIn(deps: AppDeps, username: string, password: string, client: string): Promise<{ userId: string; token: string; maxAge: number }> {
  const key = username.toLowerCase()
  const throttle = throttleOf(deps)
  const at = deps.clock.now()
  // Counted before anything else is awaited (the reads, the slow check): concurrent guesses all count against the limits.
  const { wait, attempt } = await throttle.admit(key, client, at)
  if (!attempt) {
    const e = new Throttled('Too many failed logins, retry later', wait)
    await recordSignIn(deps, { source: null, username, outcome: 'throttled', client, sentence: e.message })
    throw e
  }
  const u = await userByName(deps, username)
  const ldap = await providerConfig(deps, 'ldap')
  if (u?.source === 'local' || (!u && ldap.enabled !== true)) {
    const ok = await verifyPassword(deps, password, u?.password_hash ?? null)
    if (!u || !ok || u.is_active !== 1) {
      const reason = !u ? 'unknown user' : !ok ? 'wrong password' : 'the user is deactivated'
      await recordSignIn(deps, { source: 'local', username, outcome: 'invalid', client, sentence: INVALID, reason })
      throw new Unauthenticated(INVALID)
    }
    await throttle.succeed(key, attempt)
    await recordSignIn(deps, { source: 'local', username: u.username, outcome: 'success', client })
    return { userId: u.id, ...(await createSession(deps, u.id)) }
  }
  if (u && u.source !== 'ldap') {
    // A user of another provider signs in there; the same time is spent as on a wrong password.
    await verifyPassword(deps, password, null)
    await recordSignIn(deps, { source: u.source, username, outcome: 'invalid', client, sentence: INVALID, reason: `the user signs in with ${u.source}, not a password` })
    throw new Unauthenticated(INVALID)
  }
  if (ldap.enabled !== true) {
    await recordSignIn(deps, { source: 'ldap', username, outcome: 'invalid', client, sentence: INVALID, reason: 'LDAP sign-in is disabled' })
    throw new Unauthenticated(INVALID)
  }
  const r = await ldapAuthenticate(deps, ldap, username, password)
  if (!r.ok) {
    await recordSignIn(deps, { source: 'ldap', username, outcome: r.outcome, client, sentence: INVALID, reason: r.reason })
    throw new Unauthenticated(INVALID)
  }
  // The directory accepted the password: whatever the roles say, this was no guess.
  await throttle.succeed(key, attempt)
  return signInDirectoryUser(deps, { provider: 'ldap', username: r.username, displayName: r.displayName, groups: r.groups }, client)
}
