/**
 * The identity provider registry: the one place that lists the directory providers. Every table below is keyed by
 * Provider, so a provider added to PROVIDERS and forgotten anywhere is a compile error.
 */
import type { TSchema } from '@sinclair/typebox'
import type { AppDeps } from '../../deps'
import type { users } from '../../db/schema'
import type { Row } from '../../db/row'
import { LDAP_FIELDS, OIDC_FIELDS, PROVIDERS } from './schema'
import { testLdap } from './ldap'
import { testOidc } from './oidc-discovery'

// The list itself sits in the schema-only ./schema.ts, so the users answer schema (and the dashboard's types) can name it.
export { PROVIDERS }
/** A directory provider's name. */
export type Provider = (typeof PROVIDERS)[number]

/** A provider's stored settings with its secret decrypted (null when unset). */
export type ProviderConfig = Record<string, unknown>

/** What Saltdeck knows of one provider. */
export interface ProviderDef {
  /** Name shown in logs and on the dashboard. */
  label: string
  fields: Record<string, readonly [TSchema, unknown]>
  /** The write-only field kept encrypted, answered as `<secret>_set`. */
  secret: string
  /** The field naming where the secret is sent: changing it forgets the secret (it was given for the old place). */
  destination: string
  /** Whether group names compare ignoring case (LDAP names and DNs do). */
  groupsIgnoreCase: boolean
  /** Fields that must be set before the provider can be enabled. */
  required: string[]
  /** Tries the settings without signing anyone in: `{ok, detail}` in Saltdeck's words. */
  test(deps: AppDeps, cfg: ProviderConfig): Promise<{ ok: boolean; detail: string }>
}

/** Every provider's definition. */
export const REGISTRY: { readonly [P in Provider]: ProviderDef } = {
  ldap: { label: 'LDAP', fields: LDAP_FIELDS, secret: 'bind_password', destination: 'url', groupsIgnoreCase: true, required: ['url', 'user_base'], test: testLdap },
  oidc: { label: 'OpenID Connect', fields: OIDC_FIELDS, secret: 'client_secret', destination: 'issuer', groupsIgnoreCase: false, required: ['issuer', 'client_id'], test: testOidc },
}

/** Who checks a user's password: Saltdeck, or one of the providers. */
export type UserSource = 'local' | Provider
// The users table's `source` column must hold exactly these values: a provider missing there is a compile error here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const sourcesMatch: Same<Row<typeof users>['source'], UserSource> = true
void sourcesMatch

/** Whether a string names a provider. */
export const isProvider = (s: string): s is Provider => (PROVIDERS as readonly string[]).includes(s)
