/**
 * Statement text rendered once per shape. drizzle renders a `sql` statement by walking its chunks on every call
 * (about 1 µs for a short one, 18 µs for a wide upsert), which on SQLite costs more than running it. A statement
 * written with db/sql.ts's tag carries its template, so its text depends only on what fills its places:
 *
 * - **flat**: every value a parameter, a table, a column, a fragment without parameters, or a fragment written with the
 *   tag (a condition, a sub-select) whose own values are all these. Its rendering is kept by template (up to four
 *   variants, for a place whose fragments differ by a condition) and reused while the same tables, columns, fragments
 *   and fragments' templates sit in the same places: one WeakMap lookup and a pass over the values.
 * - **by shape**: anything else with fragments inside (a list, `sql.join`'s conditions). The statement's shape (each
 *   template's identity, each fragment's, each list's length, each table's and column's) is written as a short key while
 *   its parameters are gathered, and the text is kept by that key: a key is far shorter than the text it stands for.
 *
 * Anything else (drizzle's own params, identifiers of aliased tables, a statement not written with the tag) renders
 * as drizzle renders it, every time. A kept rendering is trusted only when drizzle's parameters are exactly the
 * values gathered, in order; otherwise that template or shape is never kept.
 */
import { Column, is, Name, SQL, StringChunk, Table } from 'drizzle-orm'
import { TEMPLATE, type MarkedSQL } from './sql'

/** What a dialect renders: text and parameters. */
type Render = (q: SQL) => { sql: string; params: unknown[] }

/**
 * A rendering: text, parameters, and the kept entry it came from (the same object for every statement of that text,
 * so an engine can hang its prepared statement on it instead of looking the text up).
 */
export interface Rendered {
  sql: string
  params: unknown[]
  kept?: object
}

/**
 * A flat template's kept rendering: its text, and per value what must sit there: PARAM (any plain value), a table,
 * column or constant fragment (that very object), or a fragment of a template (`Nest`, itself flat).
 */
interface Flat {
  text: string
  slots: Slot[]
}

/** A template's flat renderings; `closed` once no more are made there (a statement there was not flat, or four are kept). */
interface Variants {
  kept: Flat[]
  closed: boolean
}

/** What a flat template's place holds (see Flat). */
type Slot = typeof PARAM | Nest | object

/**
 * A fragment written with the tag at one place (a filter's condition, a sub-select), flat itself; `same` is the object
 * first met there when it holds no parameters (a module's column list), so meeting it again needs no walk.
 */
class Nest {
  constructor(readonly strings: TemplateStringsArray, readonly slots: Slot[], readonly same: SQL | null) {}
}

/** A nested shape's kept rendering. */
interface Shape {
  text: string
}

const PARAM = Symbol('param')
/** A template or shape that cannot be kept: rendered every time. */
const NEVER = Symbol('never')
/** A template whose values are not flat: its statements are kept by shape. */
const NESTED = Symbol('nested')

/** Shapes kept at most per renderer: lists of many lengths make many; past this, new ones render every time. */
const MAX_SHAPES = 4096
/**
 * Parameters a kept shape holds at most. A multi-row write of hundreds of rows has a shape per row count and a text of
 * tens of kilobytes each; it renders every time, as before shapes were kept (its rendering is small beside its rows).
 */
const MAX_SHAPE_PARAMS = 256
/**
 * Flat renderings kept per template: a place whose fragments differ by a condition (a filter given or not, a LIMIT of
 * another count) has one per variant; past this, the others go by shape.
 */
const MAX_VARIANTS = 4

/** A value drizzle binds as one parameter as it is. */
const plain = (v: unknown) => v === null || typeof v !== 'object' || v instanceof Uint8Array

/** A renderer that keeps each template's (or shape's) text for `render`'s dialect. */
export function keptRenderer(render: Render): (q: SQL) => Rendered {
  const flat = new WeakMap<TemplateStringsArray, Variants | typeof NESTED | typeof NEVER>()
  const shapes = new Map<string, Shape | typeof NEVER>()
  const byShape = (q: SQL): Rendered => {
    const params: unknown[] = []
    const key = shapeOf(q, params)
    if (key === null) return render(q)
    const s = shapes.get(key)
    if (s === undefined) {
      const out = render(q)
      if (shapes.size < MAX_SHAPES) shapes.set(key, sameParams(params, out.params) ? { text: out.sql } : NEVER)
      return out
    }
    return s === NEVER ? render(q) : { sql: s.text, params, kept: s }
  }
  return (q: SQL) => {
    const strings = (q as MarkedSQL)[TEMPLATE]
    if (!strings) return byShape(q)
    const k = flat.get(strings)
    if (k === NESTED) return byShape(q)
    if (k === NEVER) return render(q)
    const chunks = q.queryChunks
    if (k) {
      for (const variant of k.kept) {
        const params: unknown[] = []
        if (matches(chunks, variant.slots, params)) return { sql: variant.text, params, kept: variant }
      }
      // Once a place has had a statement that is not flat, or its variants are full, the rest go by shape at once.
      if (k.closed) return byShape(q)
    }
    // Another table, column or fragment in a place than the variants kept: flat when it can be, else by shape.
    const kind = flatOf(strings, chunks)
    if (kind === NESTED || (k && k.kept.length >= MAX_VARIANTS)) {
      if (k) k.closed = true
      else flat.set(strings, NESTED)
      return byShape(q)
    }
    const out = render(q)
    if (!sameParams(kind.params, out.params)) flat.set(strings, NEVER)
    else if (k) k.kept.push({ text: out.sql, slots: kind.slots })
    else flat.set(strings, { kept: [{ text: out.sql, slots: kind.slots }], closed: false })
    return out
  }
}

/** Whether a template's chunks fit `slots`, gathering their parameters in the order drizzle binds them. */
function matches(chunks: unknown[], slots: Slot[], params: unknown[]): boolean {
  if (chunks.length !== 2 * slots.length + 1) return false
  for (let i = 0; i < slots.length; i++) {
    const v = chunks[2 * i + 1]
    const slot = slots[i]
    if (slot === PARAM) {
      if (!plain(v)) return false
      params.push(v)
    } else if (slot instanceof Nest) {
      if (v === slot.same) continue
      if (!(v instanceof SQL) || (v as MarkedSQL)[TEMPLATE] !== slot.strings || inlined(v) || !matches(v.queryChunks, slot.slots, params)) return false
    } else if (v !== slot) return false
  }
  return true
}

/** Whether drizzle bound exactly these values, in order (else the kept text would not match them). */
function sameParams(gathered: unknown[], bound: unknown[]): boolean {
  return gathered.length === bound.length && gathered.every((p, i) => Object.is(p, bound[i]))
}

/** sql.inlineParams() (values written into the text): drizzle's renderer does that, so nothing of it is kept. */
const inlined = (q: SQL) => (q as unknown as { shouldInlineParams: boolean }).shouldInlineParams

/**
 * A template's values as flat slots with its parameters, or NESTED when one is anything but a parameter, a table, a
 * column, a fragment without parameters (a store's column list, a LIMIT: the same object on every call, so like a
 * column it is compared by identity and its text is part of the kept text) or a fragment of a template that is itself
 * all these (compared by its template, its own values in turn).
 */
function flatOf(strings: TemplateStringsArray, chunks: unknown[]): { slots: Slot[]; params: unknown[] } | typeof NESTED {
  // A template's chunks alternate text and value (db/sql.ts's tag); anything else was changed after it was made.
  if (chunks.length !== 2 * strings.length - 1) return NESTED
  const slots: Slot[] = []
  const params: unknown[] = []
  for (let i = 1; i < chunks.length; i += 2) {
    const v = chunks[i]
    if (plain(v)) {
      slots.push(PARAM)
      params.push(v)
    } else if (v instanceof SQL) {
      if (inlined(v)) return NESTED
      const inner = (v as MarkedSQL)[TEMPLATE]
      const nest = inner ? flatOf(inner, v.queryChunks) : NESTED
      if (nest !== NESTED) {
        slots.push(new Nest(inner!, nest.slots, nest.params.length ? null : v))
        params.push(...nest.params)
      } else if (isConstant(v)) slots.push(v)
      else return NESTED
    } else if (is(v, Column) || is(v, Table)) slots.push(v as object)
    else return NESTED
  }
  return { slots, params }
}

/** Whether a fragment holds no parameters (its shape key, kept by object, says so). */
function isConstant(q: SQL): boolean {
  if (constant.has(q)) return true
  const params: unknown[] = []
  return shapeOf(q, params) !== null && params.length === 0
}

/** Key parts of templates, tables and columns met in shapes, by object (one counter, so no two share one). */
const labels = new WeakMap<object, string>()
let nextLabel = 0
const labelOf = (o: object, prefix: string) => {
  let l = labels.get(o)
  if (l === undefined) labels.set(o, (l = `${prefix}${nextLabel++}`))
  return l
}

/** A table's or column's key part; null for any other object. drizzle's `is` walks a prototype chain: asked once per object. */
function entityPart(c: object): string | null {
  return labels.get(c) ?? (is(c, Column) || is(c, Table) ? labelOf(c, 'c') : null)
}

/**
 * The shape key of `q`, gathering its parameters in the order drizzle binds them; null when it holds a chunk a key
 * cannot stand for. A marked template's text chunks are its identity; an unmarked statement's (sql.join's separators,
 * sql.raw's text) are written into the key with their length, so no two different texts give one key.
 */
function shapeOf(q: SQL, params: unknown[]): string | null {
  const known = constant.get(q)
  if (known !== undefined) return known
  const before = params.length
  const key = walkShape(q, params)
  // A fragment without parameters (a store's column list, a LIMIT) is the same object call after call: its key is kept.
  if (key !== null && params.length === before) constant.set(q, key)
  return key
}

/** Keys of fragments that hold no parameters, by object. */
const constant = new WeakMap<SQL, string>()

/** shapeOf's walk over one statement's chunks. */
function walkShape(q: SQL, params: unknown[]): string | null {
  if ((q as unknown as { shouldInlineParams: boolean }).shouldInlineParams) return null
  const chunks = q.queryChunks
  const strings = (q as MarkedSQL)[TEMPLATE]
  if (strings) {
    // A template's chunks alternate text and value (db/sql.ts's tag); anything else was changed after it was made.
    if (chunks.length !== 2 * strings.length - 1) return null
    let key = `${labelOf(strings, 't')}(`
    for (let i = 1; i < chunks.length; i += 2) {
      const s = part(chunks[i], params)
      if (s === null) return null
      key += s
    }
    return `${key})`
  }
  let key = 'u('
  for (const c of chunks) {
    const s = c instanceof StringChunk ? text(c) : part(c, params)
    if (s === null) return null
    key += s
  }
  return `${key})`
}

/** A text chunk written into a key: its length, then the text. */
function text(c: StringChunk): string {
  const t = c.value.join('')
  return `s${t.length}:${t}`
}

/** One value's part of a shape key. */
function part(c: unknown, params: unknown[]): string | null {
  if (c === undefined) return 'n'
  if (plain(c)) {
    if (params.length >= MAX_SHAPE_PARAMS) return null
    params.push(c)
    return 'p'
  }
  if (c instanceof SQL) return shapeOf(c, params)
  if (c instanceof StringChunk) return text(c)
  if (Array.isArray(c)) {
    let key = '['
    for (const x of c) {
      const s = part(x, params)
      if (s === null) return null
      key += s
    }
    return `${key}]`
  }
  if (c instanceof Name) return `i${c.value.length}:${c.value}`
  return entityPart(c as object)
}
