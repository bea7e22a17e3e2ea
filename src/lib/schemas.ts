/** Value schemas (TypeBox) that know nothing of HTTP: enums, nullables, text a person types. The edge's request pieces build on them (http/schemas.ts). */
import { Type as T, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'

/** A string enum: a union of literals (reported as `literal_error`). */
export const OneOf = <const X extends string>(xs: readonly X[]) => T.Union(xs.map((x) => T.Literal(x))) as unknown as TUnion<TLiteral<X>[]>

/** A value of `schema` or null. */
export const Nullable = <S extends TSchema>(schema: S) => T.Union([schema, T.Null()])

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
