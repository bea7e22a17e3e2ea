/**
 * The `sql` tag stores write their statements with: drizzle's own (`sql\`...\``, `sql.join`, `sql.raw`, ...), plus a
 * mark of the template it came from, so the engines render each statement's text once (render.ts) instead of on
 * every call: a store's statement is the same text with new parameters almost every time.
 */
import { SQL, StringChunk, sql as drizzleSql } from 'drizzle-orm'

/** The template literal a statement was written as; its identity is the same on every call from one place. */
export const TEMPLATE = Symbol('saltdeck.sql.template')

/** A statement made by `sql`, carrying its template. */
export type MarkedSQL = SQL & { [TEMPLATE]?: TemplateStringsArray }

/** The text chunks of each template, made once: nothing changes a StringChunk, so every statement of a place shares them. */
const chunksOf = new WeakMap<TemplateStringsArray, StringChunk[]>()
function partsOf(strings: TemplateStringsArray): StringChunk[] {
  let parts = chunksOf.get(strings)
  if (!parts) chunksOf.set(strings, (parts = strings.map((s) => new StringChunk(s))))
  return parts
}

const NO_CHUNKS: never[] = []

/**
 * A drizzle SQL over `chunks`, made without its constructor's pass over them: that pass lists the tables a statement
 * uses for drizzle's own query cache, which these engines never use, and tests every chunk with `is(chunk, Table)`, a
 * prototype-chain walk per chunk (2% of a filtered activity list's CPU profile, bench/RESULTS.md session 12).
 */
function made<T>(chunks: unknown[]): SQL<T> {
  const q = new SQL<T>(NO_CHUNKS)
  ;(q as { queryChunks: unknown[] }).queryChunks = chunks
  return q
}

/** Builds a statement as drizzle's `sql` does (a string chunk, a value, a string chunk, ...), marked with its template. */
function tag<T = unknown>(strings: TemplateStringsArray, ...values: unknown[]): SQL<T> {
  const parts = partsOf(strings)
  const chunks: unknown[] = [parts[0]]
  for (let i = 0; i < values.length; i++) chunks.push(values[i], parts[i + 1])
  const q = made<T>(chunks)
  ;(q as MarkedSQL)[TEMPLATE] = strings
  return q
}

/** drizzle's `sql.join` (the chunks, `separator` between them), made as `tag` makes a statement. */
function join(chunks: unknown[], separator?: unknown): SQL {
  const out: unknown[] = []
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && separator !== undefined) out.push(separator)
    out.push(chunks[i])
  }
  return made(out)
}

/**
 * The empty fragment, one object for every call (drizzle's `sql.empty()` makes a new one each time): a statement that
 * holds it (an unfiltered list's missing WHERE) then stays flat, its text kept by template (render.ts). Its chunk list
 * is frozen, so appending to it throws instead of changing every statement that holds it.
 */
const EMPTY = drizzleSql.empty()
Object.freeze(EMPTY.queryChunks)

/** drizzle's `sql` tag and its helpers; statements written with it render once per place (see render.ts). */
export const sql: typeof drizzleSql = Object.assign(tag, {
  empty: () => EMPTY,
  fromList: drizzleSql.fromList,
  raw: drizzleSql.raw,
  join: join as typeof drizzleSql.join,
  identifier: drizzleSql.identifier,
  placeholder: drizzleSql.placeholder,
  param: drizzleSql.param,
}) as typeof drizzleSql

/**
 * A LIMIT count written into the statement's text instead of bound: SQLite plans a statement whose LIMIT is a bound
 * parameter again on every run (30-50 µs on an empty table against under 1 µs, bench/RESULTS.md "LIMIT as a literal"),
 * where a literal is planned once per text. Counts are few (a route's limit is bounded), so the texts stay few; OFFSET
 * stays a parameter (it costs nothing bound, and its values are many).
 */
export function limitOf(n: number): SQL {
  let q = limits.get(n)
  if (q) return q
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`LIMIT must be a non-negative integer, not ${n}`)
  q = drizzleSql.raw(String(n))
  // One object per count, so a statement's shape key finds it kept (render.ts); counts are few, but bound the map.
  if (limits.size < 1024) limits.set(n, q)
  return q
}

/** LIMIT fragments by count. */
const limits = new Map<number, SQL>()
