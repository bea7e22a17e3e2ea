/**
 * A statement's text and parameters, rendered straight from its chunks (the first rendering of a place, kept by render.ts): drizzle's own renderer (sqlToQuery) builds an
 * object per chunk and merges them, 10-15 µs for a store's statement; this walk gives the same text and parameters in a
 * fraction of that, which the hot paths (a run stored, a presence list) repeat thousands of times a batch. It handles
 * what stores write with the `sql` tag (text, tables, columns, values, lists, nested fragments, identifiers, placeholders); for
 * anything else it answers null and the caller renders with drizzle.
 */
import { Column, is, Name, Param, Placeholder, SQL, StringChunk, Table } from 'drizzle-orm'

/** drizzle's keys of a table's name and schema, and its marker of an aliased table (whose columns drizzle renders). */
const NAME = Symbol.for('drizzle:Name')
const SCHEMA = Symbol.for('drizzle:Schema')
const IS_ALIAS = Symbol.for('drizzle:IsAlias')

/** A name in double quotes, as both engines quote identifiers. */
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

/** How a parameter is written in the text: by its number (0-based) and its value (a prepared statement's Placeholder among them). */
type Mark = (n: number, value: unknown) => string

/** Renders `q` with `placeholder(n, value)` for the n-th parameter; null when it holds a chunk this walk leaves to drizzle. */
export function renderFast(q: SQL, placeholder: Mark): { sql: string; params: unknown[] } | null {
  const params: unknown[] = []
  const text = walk(q, params, placeholder)
  return text === null ? null : { sql: text, params }
}

function walk(q: SQL, params: unknown[], placeholder: Mark): string | null {
  // sql.inlineParams() (values written into the text): drizzle's renderer does that.
  if ((q as unknown as { shouldInlineParams: boolean }).shouldInlineParams) return null
  let out = ''
  for (const c of q.queryChunks) {
    const s = chunk(c, params, placeholder)
    if (s === null) return null
    out += s
  }
  return out
}

function chunk(c: unknown, params: unknown[], placeholder: Mark): string | null {
  if (c instanceof StringChunk) return c.value.join('')
  if (c === undefined) return ''
  if (c === null || typeof c !== 'object') {
    params.push(c)
    return placeholder(params.length - 1, c)
  }
  if (c instanceof SQL) return walk(c, params, placeholder)
  if (Array.isArray(c)) {
    let out = '('
    for (let i = 0; i < c.length; i++) {
      const s = chunk(c[i], params, placeholder)
      if (s === null) return null
      out += i ? `, ${s}` : s
    }
    return `${out})`
  }
  if (c instanceof Uint8Array) {
    params.push(c)
    return placeholder(params.length - 1, c)
  }
  if (c instanceof Name) return quote(c.value)
  // A prepared statement's $(n) (db/prepared.ts): a parameter whose value comes when it runs, as drizzle renders it. A
  // multi-row statement holds thousands, which drizzle's renderer takes tens of milliseconds over.
  if (c instanceof Placeholder) {
    params.push(c)
    return placeholder(params.length - 1, c)
  }
  if (c instanceof Param) {
    if (c.value === null) {
      params.push(null)
      return placeholder(params.length - 1, null)
    }
    if (typeof c.value === 'object' && !(c.value instanceof Uint8Array)) return null
    const v = c.encoder.mapToDriverValue(c.value)
    if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) return null
    params.push(v)
    return placeholder(params.length - 1, v)
  }
  // Tables and columns are a store's few long-lived objects: each is written out once.
  const known = names.get(c)
  if (known !== undefined) return known
  const text = nameOf(c)
  if (text !== null) names.set(c, text)
  return text
}

/** Tables and columns as written out, by object. */
const names = new WeakMap<object, string>()

/**
 * A table (`"t"`) or a column (`"t"."c"`) as drizzle writes it; null for anything else, or for one of an aliased or
 * schema-qualified table (placeholders, aliases, subqueries, views, other wrappers: drizzle's renderer knows them).
 */
function nameOf(c: object): string | null {
  if (is(c, Column)) {
    const t = c.table as unknown as Record<symbol, unknown>
    if (t[IS_ALIAS] || t[SCHEMA] !== undefined || c.keyAsName) return null
    return `${quote(t[NAME] as string)}.${quote(c.name)}`
  }
  if (is(c, Table)) {
    const t = c as unknown as Record<symbol, unknown>
    if (t[IS_ALIAS] || t[SCHEMA] !== undefined) return null
    return quote(t[NAME] as string)
  }
  return null
}
