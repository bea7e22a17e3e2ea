/** Schema pieces shared by several routes: request parts (defaults, path ids, paging) over lib/schemas.ts's value schemas. */
import { Type as T, type Static, type TOptional, type TSchema } from '@sinclair/typebox'
import { PlainText } from '../lib/schemas'

// The value schemas a route spells its fields with; they live in lib/ so a feature's config and settings schemas can use them without importing the edge.
export { BIDI_CONTROLS, CONTROL_CHARS, Nullable, OneOf, PlainText } from '../lib/schemas'

/** Marks, in types only, an optional property whose schema default fills it before the handler runs. */
export declare const DEFAULTED: unique symbol

/** An optional property with a default: absent in the request, `value` in the handler (and in the API document). */
export const Default = <S extends TSchema>(schema: S, value: Static<S>) =>
  T.Optional({ ...schema, default: value } as S) as TOptional<S> & { readonly [DEFAULTED]: true }

/** A path object of UUID parameters. */
export const UuidPath = <K extends string>(...names: K[]) =>
  T.Object(Object.fromEntries(names.map((n) => [n, T.String({ format: 'uuid' })])) as Record<K, ReturnType<typeof T.String>>)

/** `limit` (1..max, default) and `offset` (≥ 0) query parameters. */
export const paging = (max: number, dflt: number) => ({
  limit: Default(T.Integer({ minimum: 1, maximum: max }), dflt),
  // No upper bound (an offset past the end is an empty page with the true total), but clamped so SQLite can bind it.
  offset: Default(T.Integer({ minimum: 0, 'x-clamp': Number.MAX_SAFE_INTEGER }), 0),
})

/** Usernames: 1..64 of A-Z a-z 0-9 . _ @ - (contract §3). */
export const Username = T.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$' })

/** A new password: 8..1024 characters, never echoed back in errors. */
export const NewPassword = T.String({ minLength: 8, maxLength: 1024, writeOnly: true })

/** A role id list. */
export const RoleIds = T.Array(T.String({ format: 'uuid' }))
/** Roles named by id or by name (any case), as the CLI names them. */
export const RoleRefs = T.Array(T.String({ minLength: 1, maxLength: 64, description: 'a role id or a role name' }))

/** A user's display name (the API's and the CLI's). */
export const DisplayName = PlainText(0, 128)
