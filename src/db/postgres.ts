/** The PostgreSQL engine: Bun.sql underneath, a pool of connections, a reserved connection per transaction. */
import { SQL as BunSQL } from 'bun'
import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Engine, Native, PgClient, Queryable } from './engine'
import { keptRenderer } from './render'
import { renderFast } from './render-walk'

const dialect = new PgDialect()
/** The dialect's rendering, each statement's text kept per place (render.ts). */
const kept = keptRenderer((q) => renderFast(q, (n) => `$${n + 1}`) ?? dialect.sqlToQuery(q))

/** Renders a statement as PostgreSQL text ($1, $2, ...) and its parameters. */
export function renderPostgres(q: SQL): { sql: string; params: unknown[] } {
  const r = kept(q)
  return { sql: r.sql, params: r.params.map(param) }
}

/**
 * A parameter as PostgreSQL takes it: booleans are the 0/1 both engines store; undefined is null. PostgreSQL's text
 * cannot hold NUL (SQLite's can; the server answers 22021): a NUL becomes U+FFFD, so a filter holding one matches
 * nothing, as on SQLite where no stored text has one, and a write stores the rest instead of failing with a 500.
 */
export function param(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'string' && v.includes('\0')) return v.replaceAll('\0', '\uFFFD')
  return v === undefined ? null : v
}

/**
 * Type OIDs Bun.sql hands back as strings: int8 and numeric, and arrays of them; and the arrays it hands back as typed
 * arrays when they arrive in binary (int4[] as Int32Array, float4[] as Float32Array), made plain arrays as elsewhere.
 */
const INT8 = 20
const NUMERIC = 1700
const ARRAYS = new Set([1016, 1231, 1007, 1021])

/** A result as Bun.sql answers it: the rows, with the columns the server described. */
export type PgResult = Record<string, unknown>[] & { count?: number; columns?: { name: string; type: number }[] | null }

/** Which columns of a result turn from text into numbers: scalars, and arrays. */
interface Numeric {
  scalars: string[]
  arrays: string[]
}

const NONE: Numeric = { scalars: [], arrays: [] }

/**
 * Per column list (Bun.sql shares one array between the runs of a prepared statement on a connection, so a statement
 * is looked at once per connection; parameterless ones arrive with a new list each time and are looked at each time:
 * a loop over a handful of columns).
 */
const numericOf = new WeakMap<object, Numeric>()

function numericColumns(columns: { name: string; type: number }[]): Numeric {
  let n = numericOf.get(columns)
  if (n) return n
  // By name, the last column of a name winning, as it does in the row object.
  const type = new Map<string, number>()
  for (const c of columns) type.set(c.name, c.type)
  const scalars: string[] = []
  const arrays: string[] = []
  for (const [name, t] of type) {
    if (t === INT8 || t === NUMERIC) scalars.push(name)
    else if (ARRAYS.has(t)) arrays.push(name)
  }
  n = scalars.length || arrays.length ? { scalars, arrays } : NONE
  numericOf.set(columns, n)
  return n
}

/**
 * A row as the engine promises it: a plain object, int8 (counts, epoch milliseconds, ids) and numeric as JS numbers, as
 * SQLite hands them (every integer Saltdeck stores fits in 53 bits: milliseconds until the year 285,616). The row object
 * is the driver's own, changed in place.
 */
function convert(row: Record<string, unknown>, n: Numeric) {
  for (const k of n.scalars) {
    const v = row[k]
    if (v !== null) row[k] = Number(v)
  }
  for (const k of n.arrays) {
    const v = row[k] as unknown[] | null
    if (v !== null) row[k] = numbersIn(v)
  }
  return row
}

/** Every row of a result, converted, in a plain array (Bun.sql answers an Array subclass carrying the metadata). */
function rowsOf(r: PgResult): Record<string, unknown>[] {
  const n = r.columns ? numericColumns(r.columns) : NONE
  const out = new Array<Record<string, unknown>>(r.length)
  if (n === NONE) for (let i = 0; i < r.length; i++) out[i] = r[i]!
  else for (let i = 0; i < r.length; i++) out[i] = convert(r[i]!, n)
  return out
}

/** The first row of a result, converted, or undefined. */
function firstOf(r: PgResult): Record<string, unknown> | undefined {
  if (!r.length) return undefined
  return convert(r[0]!, r.columns ? numericColumns(r.columns) : NONE)
}

/** An array of numbers (nested for several dimensions; a typed array) as a plain array of JS numbers. */
function numbersIn(v: unknown[]): unknown[] {
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>)
  return v.map((x) => (x === null ? null : Array.isArray(x) ? numbersIn(x) : Number(x)))
}

/**
 * Starts a statement on `client` at once: Bun.sql's queries are lazy (sent when awaited or executed), so statements
 * issued one after another reach the connection in that order, whichever caller awaits them and when.
 */
export function send(client: PgClient, text: string, params: unknown[]): Promise<PgResult> {
  return client.unsafe(text, params).execute() as unknown as Promise<PgResult>
}

/** A result's rows as the engine hands them: every row, or the first (prepared.ts's statements use them too). */
export const pgRows = { all: rowsOf, first: firstOf }

/** Runs statements on a pool or on a transaction's connection. */
function direct(client: PgClient, native: Native): Queryable {
  const run = (q: SQL) => {
    const r = renderPostgres(q)
    return send(client, r.sql, r.params)
  }
  return {
    engine: 'postgres',
    native,
    rows: async <T>(q: SQL) => rowsOf(await run(q)) as T[],
    row: async <T>(q: SQL) => firstOf(await run(q)) as T | undefined,
    // count: the rows an INSERT, UPDATE or DELETE wrote (or a SELECT returned); a script of several statements has none.
    exec: async (q: SQL) => (await run(q)).count ?? 0,
  }
}

/** The database a postgres:// URL names, or undefined when it names none (the driver's default then applies). */
function urlDatabase(url: string): string | undefined {
  try {
    const name = decodeURIComponent(new URL(url).pathname.slice(1))
    return name || undefined
  } catch {
    return undefined
  }
}

/**
 * Opens a pool to `url` (postgres://user:pass@host:port/db?sslmode=...) of at most `max` connections, each closed
 * after `idleSeconds` unused (never, by default). `onClose` hears every connection of the pool that closes or fails to
 * open (pg-lock.ts listens to learn at once that a leader's connection dropped).
 */
export function postgresEngine(url: string, opts: { max?: number; idleSeconds?: number } = {}): Engine {
  const closed = new Set<(e: Error | null) => void>()
  const client = new BunSQL(url, {
    // Bun.sql lets a PGDATABASE in the environment win over the URL's database; an option wins over both, so the
    // database the operator named is the one used (an unrelated PGDATABASE in a shell must not redirect a migration).
    database: urlDatabase(url),
    max: opts.max ?? 10,
    idleTimeout: opts.idleSeconds,
    onclose: (e) => {
      for (const f of closed) f(e)
    },
  })
  const native: Native = { engine: 'postgres', client, onClose: closed }
  const pool = direct(client, native)
  return {
    ...pool,
    // A transaction's native client is its own connection, so per-engine modules inside it stay inside it.
    tx: <T>(fn: (tx: Queryable) => Promise<T>) =>
      // Wrapped in an object: Bun.sql awaits each element of an array the callback returns.
      client.begin(async (t) => ({ out: await fn(direct(t, { engine: 'postgres', client: t, onClose: closed })) })).then((r) => r.out as T),
    // Another instance's commit leaves no trace here short of a statement: whatever is kept is read again.
    commitEpoch: () => null,
    close: () => client.close({ timeout: 5 }),
  }
}
