/** Signing a directory user in, the same way for every provider, and recording every sign-in (audit, metrics, log). */
import type { AppDeps } from '../../deps'
import { Forbidden, Unauthenticated } from '../../lib/errors'
import { createSession } from '../auth/service'
import { upsertDirectoryUser, userByName } from '../users/service'
import { audit } from '../audit/service'
import { REGISTRY, type Provider, type UserSource } from './providers'
import { mappedRoleIds } from './store'

/** What a provider proved about a person. */
export interface DirectoryIdentity {
  provider: Provider
  username: string
  displayName: string
  /** Group names or DNs the person holds in the directory. */
  groups: string[]
}

/** How a sign-in ended, as counted in saltdeck_sign_ins_total. */
export type SignInOutcome = 'success' | 'invalid' | 'no_role' | 'unavailable' | 'throttled'

/** The sentence of a directory user who holds no mapped group. */
export const NO_ROLE = 'No Saltdeck role for this account'

/** One sign-in attempt to record. */
export interface SignInRecord {
  source: UserSource | null
  username: string
  outcome: SignInOutcome
  client: string
  /** What the caller was answered (failures). */
  sentence?: string
  /** Why it failed, for the log only (never the password or a secret). */
  reason?: string
}

/** Writes a sign-in's audit entry (action auth.login, with source and outcome), counts it, and logs a failure's reason. */
export async function recordSignIn(deps: AppDeps, r: SignInRecord) {
  const name = r.username.slice(0, 64)
  const tail = `source: ${r.source ?? 'unknown'}; outcome: ${r.outcome}`
  await audit(deps, { username: name, action: 'auth.login', target: name, ok: r.outcome === 'success', detail: r.sentence ? `${r.sentence}; ${tail}` : tail, client: r.client })
  deps.metrics?.signIn(r.source ?? 'unknown', r.outcome)
  if (r.outcome !== 'success') deps.log.warn('sign-in refused', { source: r.source ?? 'unknown', username: name, outcome: r.outcome, reason: r.reason ?? r.sentence ?? '' })
}

/** Names a directory may give: 1..255 characters, no control characters (the name is shown and logged). */
const USABLE_NAME = /^[^\u0000-\u001f\u007f-\u009f]{1,255}$/

/**
 * Signs in a person a provider has authenticated: creates or updates the user (source = the provider), replaces its
 * roles with exactly the roles mapped to its groups, and creates a session as a local login does. Holding no mapped
 * group answers 403 `No Saltdeck role for this account` with no session (and takes away any roles held before). A
 * name that belongs to a user of another source (a local account above all) is never taken over: 401.
 */
export async function signInDirectoryUser(deps: AppDeps, who: DirectoryIdentity, client: string): Promise<{ userId: string; token: string; maxAge: number }> {
  const { provider } = who
  const label = REGISTRY[provider].label
  const fail = async (outcome: SignInOutcome, error: Error, reason: string): Promise<never> => {
    await recordSignIn(deps, { source: provider, username: who.username, outcome, client, sentence: error.message, reason })
    throw error
  }
  if (!USABLE_NAME.test(who.username)) await fail('invalid', new Unauthenticated('Invalid credentials'), `${label} gave an unusable user name`)
  const existing = await userByName(deps, who.username)
  if (existing && existing.source !== provider)
    await fail('invalid', new Unauthenticated('Invalid credentials'), `the name belongs to a user of source ${existing.source}; not taken over by ${label}`)
  if (existing && existing.is_active !== 1) await fail('invalid', new Unauthenticated('Invalid credentials'), 'the user is deactivated in Saltdeck')
  const roleIds = await mappedRoleIds(deps.db, provider, who.groups)
  const displayName = who.displayName.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 128)
  if (!roleIds.length) {
    // Roles are the directory's to give: one who lost every mapped group loses what it held.
    if (existing) await upsertDirectoryUser(deps, provider, existing.username, displayName, [])
    await fail('no_role', new Forbidden(NO_ROLE), `no mapped group among ${who.groups.length} group(s)`)
  }
  const user = await upsertDirectoryUser(deps, provider, existing?.username ?? who.username, displayName, roleIds)
  const session = await createSession(deps, user.id)
  await recordSignIn(deps, { source: provider, username: user.username, outcome: 'success', client })
  return { userId: user.id, ...session }
}
