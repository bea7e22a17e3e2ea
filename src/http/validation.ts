/**
 * The one validation step of every route: pydantic-lax coercion driven by the route's TypeBox schemas,
 * then TypeBox's error list mapped to the 422 vocabulary of contract §1.1.
 */
import { FormatRegistry, Kind, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { ErrorEntry } from './errors'

/** The three places a request carries input, as named in `loc`. */
export type Part = 'path' | 'query' | 'body'

const HEX = /^[0-9a-fA-F]$/

/**
 * The canonical (lower-case, hyphenated) form of a UUID in any form pydantic accepts: simple (32 hex digits),
 * hyphenated, braced `{…}` or `urn:uuid:…`, any case; null when it is none of them.
 */
export function canonicalUuid(s: string): string | null {
  const inner = s.length === 38 && s[0] === '{' && s[37] === '}' ? s.slice(1, 37) : s.length === 45 && s.startsWith('urn:uuid:') ? s.slice(9) : s
  const hex = inner.length === 32 ? inner : inner.length === 36 && [8, 13, 18, 23].every((i) => inner[i] === '-') ? inner.replace(/-/g, '') : null
  if (!hex || hex.length !== 32 || ![...hex].every((c) => HEX.test(c))) return null
  const h = hex.toLowerCase()
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** Why a string is not a UUID, in the words of the parser behind pydantic; null when it is one. */
export function uuidProblem(s: string): string | null {
  if (canonicalUuid(s) !== null) return null
  const [body, offset, simple] = s.length >= 2 && s[0] === '{' && s.endsWith('}') ? [s.slice(1, -1), 1, false] : s.startsWith('urn:uuid:') ? [s.slice(9), 9, false] : [s, 0, true]
  const bounds: number[] = []
  let hyphens = 0
  let index = 0
  for (const c of body) {
    if (c === '-') {
      if (hyphens < 4) bounds.push(index)
      hyphens++
    } else if (!HEX.test(c)) return `invalid character: found \`${c}\` at ${index + offset}`
    index += Buffer.byteLength(c)
  }
  if (hyphens === 0 && simple) return `invalid length: found ${Buffer.byteLength(s)}`
  if (hyphens !== 4) return `invalid group count: expected 5, found ${hyphens + 1}`
  const starts = [0, 9, 14, 19, 24]
  const want = [8, 4, 4, 4, 12]
  for (let g = 0; g < 4; g++) if (bounds[g] !== starts[g + 1]! - 1) return `invalid group length in group ${g}: expected ${want[g]}, found ${bounds[g]! - starts[g]!}`
  // The last group is the wrong length; counted as the parser does, over the whole input.
  return `invalid group length in group 4: expected 12, found ${Buffer.byteLength(s) - starts[4]!}`
}

/** Why a string is not an http(s) URL: [type, reason]; null when it is one. */
export function urlProblem(s: string): [string, string] | null {
  // What the WHATWG parser refuses without saying why, in the words of the URL parser behind pydantic.
  const parts = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^/:?#]*)(?::([^/?#]*))?/i.exec(s)
  if (parts && /^https?:/i.test(s)) {
    if (!parts[1]) return ['url_parsing', 'empty host']
    if (parts[2] !== undefined && parts[2] !== '' && (!/^\d+$/.test(parts[2]) || Number(parts[2]) > 65535)) return ['url_parsing', 'invalid port number']
  }
  let u: URL
  try {
    u = new URL(s)
  } catch {
    return ['url_parsing', s.includes(':') ? 'invalid international domain name' : 'relative URL without a base']
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return ['url_scheme', "URL scheme should be 'http' or 'https'"]
  if (!u.hostname) return ['url_parsing', 'empty host']
  return null
}

FormatRegistry.Set('uuid', (s) => uuidProblem(s) === null)
FormatRegistry.Set('http-url', (s) => urlProblem(s) === null)

const TRUE = new Set(['true', '1', 'yes', 'on', 't', 'y'])
const FALSE = new Set(['false', '0', 'no', 'off', 'f', 'n'])
// As Python's int(): digits may be grouped with single underscores (`5_0` is 50).
const INT_STRING = /^\s*[+-]?\d+(_\d+)*(\.0*)?\s*$/

/** The non-null branch of an "X or null" union, else undefined. */
function nullableInner(schema: TSchema): TSchema | undefined {
  if (schema[Kind] !== 'Union') return undefined
  const inner = (schema.anyOf as TSchema[]).filter((s) => s[Kind] !== 'Null')
  return inner.length === 1 && inner.length < schema.anyOf.length ? inner[0] : undefined
}

/** Pydantic lax mode: integers from integral strings, booleans from their usual spellings, trimmed names. */
export function coerce(schema: TSchema, value: unknown): unknown {
  switch (schema[Kind]) {
    case 'Integer': {
      let n = value
      if (typeof value === 'string' && INT_STRING.test(value)) n = Number.parseInt(value.trim().replace(/_/g, ''), 10)
      // A JSON bool is read as 0/1, as pydantic's lax mode does.
      else if (typeof value === 'boolean') n = value ? 1 : 0
      // A bound the schema clamps to instead of refusing (an offset far past the end).
      return typeof n === 'number' && typeof schema['x-clamp'] === 'number' && n > schema['x-clamp'] ? schema['x-clamp'] : n
    }
    case 'Boolean':
      if (typeof value === 'string') {
        const v = value.toLowerCase()
        if (TRUE.has(v)) return true
        if (FALSE.has(v)) return false
      }
      if (value === 0 || value === 1) return value === 1
      return value
    case 'String':
      if (typeof value === 'string' && schema.format === 'uuid') return canonicalUuid(value) ?? value
      return typeof value === 'string' && schema.trim ? value.trim() : value
    case 'Union': {
      const inner = nullableInner(schema)
      return inner && value !== null ? coerce(inner, value) : value
    }
    case 'Array':
      return Array.isArray(value) ? value.map((v) => coerce(schema.items, v)) : value
    case 'Object': {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return value
      const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
      for (const [k, s] of Object.entries(schema.properties as Record<string, TSchema>)) if (k in out) out[k] = coerce(s, out[k])
      return out
    }
    default:
      return value
  }
}

const plural = (n: number) => (n === 1 ? '' : 's')
const quoteAll = (xs: unknown[]) => {
  const q = xs.map((x) => (typeof x === 'string' ? `'${x}'` : String(x)))
  return q.length > 1 ? `${q.slice(0, -1).join(', ')} or ${q.at(-1)}` : q[0]!
}

/** Maps one TypeBox error to its pydantic entry (or entries, for an "X or null" union). */
function mapError(e: ValueError, loc: (string | number)[], secret: boolean): ErrorEntry[] {
  const s = e.schema
  const v = e.value
  const entry = (type: string, msg: string, ctx?: Record<string, unknown>): ErrorEntry[] => {
    const out: ErrorEntry = { type, loc, msg }
    if (!secret && !s.writeOnly) out.input = v
    if (ctx) out.ctx = ctx
    return [out]
  }
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return entry('extra_forbidden', 'Extra inputs are not permitted')
    case ValueErrorType.Object:
      return loc.length === 1
        ? entry('model_attributes_type', 'Input should be a valid dictionary or object to extract fields from')
        : entry('dict_type', 'Input should be a valid dictionary')
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
      if (typeof v === 'number' && !Number.isFinite(v)) return entry('finite_number', 'Input should be a finite number')
      if (typeof v === 'number') return entry('int_from_float', 'Input should be a valid integer, got a number with a fractional part')
      if (typeof v === 'string') return entry('int_parsing', 'Input should be a valid integer, unable to parse string as an integer')
      return entry('int_type', 'Input should be a valid integer')
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return entry('greater_than_equal', `Input should be greater than or equal to ${s.minimum}`, { ge: s.minimum })
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return entry('less_than_equal', `Input should be less than or equal to ${s.maximum}`, { le: s.maximum })
    case ValueErrorType.Boolean:
      return typeof v === 'string' || typeof v === 'number'
        ? entry('bool_parsing', 'Input should be a valid boolean, unable to interpret input')
        : entry('bool_type', 'Input should be a valid boolean')
    case ValueErrorType.String:
      if (s.format === 'uuid') return entry('uuid_type', 'UUID input should be a string, bytes or UUID object')
      return entry('string_type', 'Input should be a valid string')
    case ValueErrorType.StringMinLength:
      return entry('string_too_short', `String should have at least ${s.minLength} character${plural(s.minLength)}`, { min_length: s.minLength })
    case ValueErrorType.StringMaxLength:
      return entry('string_too_long', `String should have at most ${s.maxLength} character${plural(s.maxLength)}`, { max_length: s.maxLength })
    case ValueErrorType.StringPattern:
      return entry('string_pattern_mismatch', `String should match pattern '${s.pattern}'`, { pattern: s.pattern })
    case ValueErrorType.StringFormat: {
      if (s.format === 'uuid') {
        const reason = uuidProblem(String(v))!
        return entry('uuid_parsing', `Input should be a valid UUID, ${reason}`, { error: reason })
      }
      const [type, reason] = urlProblem(String(v))!
      return type === 'url_scheme'
        ? entry(type, reason, { expected_schemes: "'http' or 'https'" })
        : entry(type, `Input should be a valid URL, ${reason}`, { error: reason })
    }
    case ValueErrorType.Array:
      return entry('list_type', 'Input should be a valid list')
    case ValueErrorType.Literal:
      return entry('literal_error', `Input should be ${quoteAll([s.const])}`, { expected: quoteAll([s.const]) })
    case ValueErrorType.Union: {
      const branches = s.anyOf as TSchema[]
      if (branches.every((b) => b[Kind] === 'Literal')) {
        const expected = quoteAll(branches.map((b) => b.const))
        return entry('literal_error', `Input should be ${expected}`, { expected })
      }
      const inner = nullableInner(s)
      if (inner) return [...Value.Errors(inner, v)].flatMap((ie) => mapError(ie, [...loc, ...pointer(ie.path)], secret))
      // As pydantic: each branch's first problems, under the branch's label (`constrained-str`, `list[str]`, …).
      return branches.flatMap((b) => firstPerPath([...Value.Errors(b, v)]).flatMap((ie) => mapError(ie, [...loc, branchLabel(b), ...pointer(ie.path)], secret)))
    }
    default:
      return entry('value_error', `Value error, ${e.message}`)
  }
}

/** A union branch's name in pydantic's `loc`: its type, `constrained-` when it carries bounds or a pattern. */
function branchLabel(b: TSchema): string {
  const constrained = ['minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'format'].some((k) => b[k] !== undefined)
  const base = ({ String: 'str', Integer: 'int', Number: 'float', Boolean: 'bool', Object: 'dict', Null: 'none' } as Record<string, string>)[b[Kind] as string]
  if (b[Kind] === 'Array') return `list[${branchLabel(b.items as TSchema)}]`
  return `${constrained ? 'constrained-' : ''}${base ?? 'union'}`
}

/** The first error of each path (pydantic reports one failing constraint per value). */
function firstPerPath(errors: ValueError[]): ValueError[] {
  const seen = new Set<string>()
  return errors.filter((e) => !seen.has(e.path) && !!seen.add(e.path))
}

/** JSON-pointer path to loc segments (array indexes as numbers). */
function pointer(path: string): (string | number)[] {
  if (!path) return []
  return path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p))
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()
/** A compiled checker per schema: the fast yes/no path; errors are walked only when it says no. */
function checker(schema: TSchema) {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c
}

/** Validates one part of a request; returns the coerced value and every problem found. */
export function checkPart(part: Part, schema: TSchema, raw: unknown): { value: unknown; errors: ErrorEntry[] } {
  // A JSON null body is no body, as FastAPI reads it.
  if (part === 'body' && (raw === undefined || raw === null)) return { value: raw, errors: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] }
  const value = coerce(schema, raw)
  // Defaults fill what was left out only once the value is valid: a 422 shows the input as it was sent.
  if (checker(schema).Check(value)) return { value: Value.Default(schema, value), errors: [] }
  const errors: ErrorEntry[] = []
  const missing = new Set<string>()
  const reported = new Set<string>()
  for (const e of Value.Errors(schema, value)) {
    if (missing.has(e.path)) continue
    const loc = [part, ...pointer(e.path)]
    if (e.type === ValueErrorType.ObjectRequiredProperty) {
      missing.add(e.path)
      // As pydantic: the enclosing object as it was sent (its password fields left out).
      errors.push({ type: 'missing', loc, msg: 'Field required', input: withoutSecrets(schema, at(raw, loc.slice(1, -1))) })
      continue
    }
    // As pydantic: one error per field (its first failing constraint), and the value as it was sent, before any coercion.
    if (reported.has(e.path)) continue
    reported.add(e.path)
    for (const entry of mapError(e, loc, isSecret(schema, e.path))) {
      if ('input' in entry) {
        const sent = at(raw, entry.loc.slice(1))
        if (sent !== undefined) entry.input = sent
      }
      errors.push(entry)
    }
  }
  // pydantic reports the model's own fields first and unknown properties after them.
  errors.sort((a, b) => Number(a.type === 'extra_forbidden') - Number(b.type === 'extra_forbidden'))
  return { value, errors }
}

/** The value at `path` inside a sent input; undefined when the path leaves it. */
function at(value: unknown, path: (string | number)[]): unknown {
  let v = value
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<string | number, unknown>)[k]
  }
  return v
}

/** A sent object without the properties marked writeOnly (passwords), which are never echoed. */
function withoutSecrets(schema: TSchema, value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value) || schema[Kind] !== 'Object') return value
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([k]) => !isSecret(schema, `/${k}`)))
}

/** True when the property at `path` is marked writeOnly (passwords): its input is never echoed. */
function isSecret(schema: TSchema, path: string): boolean {
  const key = pointer(path)[0]
  if (typeof key !== 'string' || schema[Kind] !== 'Object') return false
  const prop = (schema.properties as Record<string, TSchema>)[key]
  return !!prop && (prop.writeOnly === true || (nullableInner(prop)?.writeOnly ?? false))
}
