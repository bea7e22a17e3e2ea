/** Schema pieces shared by several routes. */
import { Type as T, type Static, type TLiteral, type TOptional, type TSchema, type TUnion } from '@sinclair/typebox'

/** Marks, in types only, an optional property whose schema default fills it before the handler runs. */
export declare const DEFAULTED: unique symbol

/** An optional property with a default: absent in the request, `value` in the handler (and in the API document). */
export const Default = <S extends TSchema>(schema: S, value: Static<S>) =>
  T.Optional({ ...schema, default: value } as S) as TOptional<S> & { readonly [DEFAULTED]: true }

/** A string enum: a union of literals (reported as `literal_error`). */
export const OneOf = <const X extends string>(xs: readonly X[]) => T.Union(xs.map((x) => T.Literal(x))) as unknown as TUnion<TLiteral<X>[]>

/** A value of `schema` or null. */
export const Nullable = <S extends TSchema>(schema: S) => T.Union([schema, T.Null()])

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

/** The control characters no name field may hold (contract §4): C0, DEL and C1 (U+0000–U+001F, U+007F–U+009F). */
export const CONTROL_CHARS = '\\u0000-\\u001f\\u007f-\\u009f'

/**
 * The bidirectional controls no name field may hold (U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates):
 * `admin\u202egnp.exe` reads as "adminexe.png" wherever the name is shown (issue 20).
 */
export const BIDI_CONTROLS = '\\u202a-\\u202e\\u2066-\\u2069'

/** A name or text a person types: `min`..`max` chars, no control characters and no bidirectional controls. */
export const PlainText = (min: number, max: number, trim = false) =>
  T.String({ minLength: min, maxLength: max, pattern: `^[^${CONTROL_CHARS}${BIDI_CONTROLS}]*$`, ...(trim ? { trim: true } : {}) })

/** A user's display name (the API's and the CLI's). */
export const DisplayName = PlainText(0, 128)
