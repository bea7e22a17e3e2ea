/** The identity settings of contract §14: every provider field's type and default, and the answers' shapes. */
import { Type as T, type TBoolean, type TNull, type TObject, type TSchema, type TUnion } from '@sinclair/typebox'
import { Nullable, PlainText } from '../../lib/schemas'

/** The directory providers, in display order. */
export const PROVIDERS = ['ldap', 'oidc'] as const

const bool = () => T.Boolean()
/** One line of text: no control characters. */
const line = (max: number) => PlainText(0, max)

/** LDAP fields as written: schema and default (bind_password is write-only). */
export const LDAP_FIELDS = {
  enabled: [bool(), false],
  url: [T.String({ pattern: '^ldaps?://[^\\s/?#]+/?$', maxLength: 2048, description: 'ldap://host[:port] or ldaps://host[:port]' }), null],
  start_tls: [bool(), true],
  verify_tls: [bool(), true],
  ca_cert: [T.String({ maxLength: 65536, description: 'PEM certificate(s) trusted for the directory; "" to trust the system CAs only' }), null],
  bind_dn: [line(1024), null],
  bind_password: [T.String({ maxLength: 1024, writeOnly: true, description: '"" forgets it' }), null],
  user_base: [line(1024), null],
  user_filter: [PlainText(1, 1024), '(uid={username})'],
  group_base: [line(1024), null],
  group_filter: [PlainText(1, 1024), '(member={dn})'],
  display_name_attr: [T.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z][A-Za-z0-9-]*$' }), 'cn'],
} as const satisfies Record<string, [TSchema, unknown]>

/** OpenID Connect fields as written: schema and default (client_secret is write-only). */
export const OIDC_FIELDS = {
  enabled: [bool(), false],
  issuer: [T.String({ format: 'http-url', maxLength: 2048 }), null],
  client_id: [line(512), null],
  client_secret: [T.String({ maxLength: 1024, writeOnly: true, description: '"" forgets it' }), null],
  scopes: [PlainText(1, 512), 'openid profile email groups'],
  username_claim: [PlainText(1, 128), 'preferred_username'],
  groups_claim: [PlainText(1, 128), 'groups'],
  display_name: [PlainText(1, 128), 'SSO'],
} as const satisfies Record<string, [TSchema, unknown]>

type Fields = Record<string, readonly [TSchema, unknown]>
/** A PUT body: every field optional and nullable (null or absent leaves it alone), nothing else accepted. */
export const patchBody = (f: Fields) =>
  T.Object(Object.fromEntries(Object.entries(f).map(([k, [s]]) => [k, T.Optional(Nullable(s))])), { additionalProperties: false })
/** Defaults of a provider's fields. */
export const defaultsOf = (f: Fields) => Object.fromEntries(Object.entries(f).map(([k, [, d]]) => [k, d]))

/** A provider's answer fields: each field but the secret (nullable when its default is null), and `<secret>_set`. */
type OutFields<F extends Fields, S extends string> = { -readonly [K in Exclude<keyof F, S>]: F[K][1] extends null ? TUnion<[F[K][0], TNull]> : F[K][0] } & { [K in `${S}_set`]: TBoolean }
/** A provider as answered: its fields (null when unset) without the secret, and `<secret>_set`, typed field by field. */
const outOf = <F extends Fields, S extends keyof F & string>(f: F, secret: S) =>
  T.Object(Object.fromEntries([
    ...Object.entries(f).filter(([k]) => k !== secret).map(([k, [s, d]]) => [k, d === null ? Nullable(s) : s]),
    [`${secret}_set`, T.Boolean()],
  ])) as unknown as TObject<OutFields<F, S>>

/** GET /api/admin/identity. */
export const IdentityOut = T.Object({
  ldap: outOf(LDAP_FIELDS, 'bind_password'),
  oidc: outOf(OIDC_FIELDS, 'client_secret'),
  updated_at: Nullable(T.String({ format: 'date-time' })),
})

/** The answer of a provider test. */
export const TestOut = T.Object({ ok: T.Boolean(), detail: T.String() })

/** A group → role mapping. */
export const MappingOut = T.Object({ id: T.String({ format: 'uuid' }), provider: T.String(), group: T.String(), role_id: T.String({ format: 'uuid' }), role_name: T.String(), created_at: T.String({ format: 'date-time' }) })
/** GET /api/admin/identity/mappings. */
export const MappingListOut = T.Object({ total: T.Integer(), mappings: T.Array(MappingOut) })
