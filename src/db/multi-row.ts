/**
 * Set-based writes for PostgreSQL: rows gathered in memory and sent as `VALUES (…), (…)` lists through statements
 * prepared on the handle, so a flush of thousands of rows costs a few statements rather than a round trip per row.
 * Full chunks have one fixed size and the rest goes in power-of-two pieces, so each statement has a handful of texts
 * (each prepared once per connection) whatever the row count. PostgreSQL takes at most 65,535 parameters per statement,
 * which bounds `size × columns`.
 */
import { sql, type SQL } from 'drizzle-orm'
import type { Queryable } from './engine'
import { $, prepare, type Pipeline, type Prepared } from './prepared'
import { param } from './postgres'

/** Gathered rows that a statement depending on them sends first (`after`). */
export interface Sendable {
  send(): void
}

/** A statement's argument, as prepared statements take them. */
export type Arg = Parameters<Prepared['write']>[number]

/** PostgreSQL's limit on a statement's parameters. */
const MAX_PARAMS = 65_535

const lists = new Map<string, SQL>()

/**
 * `($1::t1, $2::t2), ($3::t1, $4::t2), …`: a VALUES list of `rows` rows of placeholders, column j cast to types[j]
 * (a VALUES list in FROM or USING has no target column to take its types from). Kept per shape.
 */
export function valuesList(rows: number, types: readonly string[]): SQL {
  const key = `${rows}:${types.join(',')}`
  let v = lists.get(key)
  if (v) return v
  const casts = types.map((t) => sql.raw(`::${t}`))
  const row = (r: number) => sql`(${sql.join(types.map((_, j) => sql`${$(r * types.length + j + 1)}${casts[j]}`), sql`, `)})`
  v = sql.join(Array.from({ length: rows }, (_, r) => row(r)), sql`, `)
  lists.set(key, v)
  return v
}

/**
 * Rows of one multi-row statement, gathered and sent into a Pipeline: a full chunk as soon as it fills, the rest by
 * send(). `make(values)` is the statement around a VALUES list (from `valuesList`). A statement that must follow
 * another's rows (a delete after the inserts it undoes) names it in `after`: its pending rows go first.
 */
export class MultiRow<R = unknown> {
  private args: Arg[] = []
  private stmts = new Map<number, Prepared>()
  private readonly cols: number

  /**
   * On handle `q` (a transaction), each row `types.length` columns, full chunks of `size` rows; `then` receives each
   * chunk's returned rows (RETURNING, or a read), as soon as they come.
   */
  constructor(
    private q: Queryable,
    private p: Pipeline,
    private types: readonly string[],
    private make: (values: SQL) => SQL,
    private size: number,
    private opts: { after?: Sendable[]; then?: (rows: R[]) => void } = {},
  ) {
    this.cols = types.length
    if (size * this.cols > MAX_PARAMS) throw new Error(`a chunk of ${size} rows of ${this.cols} columns passes PostgreSQL's ${MAX_PARAMS} parameters`)
  }

  /** Rows gathered and not sent yet. */
  get pending() {
    return this.args.length / this.cols
  }

  /** Adds one row (its columns in the order of `types`); a full chunk is sent at once. */
  add(...row: Arg[]) {
    for (let i = 0; i < row.length; i++) this.args.push(row[i]!)
    if (this.args.length >= this.size * this.cols) this.send()
  }

  /** Sends every gathered row (the statements in `after` first): full chunks, then the rest in power-of-two pieces. */
  send() {
    if (!this.args.length) return
    for (const a of this.opts.after ?? []) a.send()
    const args = this.args
    this.args = []
    let at = 0
    for (let rows = this.size; at < args.length; rows = Math.min(rows, 1 << Math.floor(Math.log2((args.length - at) / this.cols)))) {
      while (at + rows * this.cols <= args.length) {
        this.sendChunk(rows, args.slice(at, at + rows * this.cols))
        at += rows * this.cols
      }
    }
  }

  private sendChunk(rows: number, args: Arg[]) {
    let s = this.stmts.get(rows)
    if (!s) this.stmts.set(rows, (s = prepare(this.q, this.make(valuesList(rows, this.types)))))
    const then = this.opts.then
    if (then) this.p.add(s.all<R>(...args), then)
    else this.p.add(s.write(...args))
  }
}

/** Rows per ArrayRows statement: bounds a statement's arrays (and the memory of its parameters) on large flushes. */
const ARRAY_ROWS = 65_536

/** Separators of a column sent as one text (ArrayRows): between values, and a text value that is null. */
const SEP = '\x1f'
const NUL = '\x1e'

/**
 * `unnest($1::t1[], …)`: one array parameter per column, the rows as a set in FROM; `packed`, each column is one text
 * split on the server (`string_to_array`), which costs the client a join instead of Bun.sql quoting every element.
 */
export function unnestOf(types: readonly string[], packed = false): SQL {
  const col = (t: string, j: number) =>
    packed ? sql`string_to_array(${$(j + 1)}::text, chr(31), ${sql.raw(t === 'text' ? 'chr(30)' : "''")})${sql.raw(`::${t}[]`)}` : sql`${$(j + 1)}${sql.raw(`::${t}[]`)}`
  return sql`unnest(${sql.join(types.map(col), sql`, `)})`
}

/** A text column as one string for string_to_array, or null when a value holds a separator (sent as an array then). */
function packText(col: unknown[]): string | null {
  let out: unknown[] = col
  for (let i = 0; i < col.length; i++) {
    const v = col[i]
    if (v === null) {
      if (out === col) out = col.slice()
      out[i] = NUL
    } else if ((v as string).includes(SEP) || v === NUL) return null
  }
  return out.join(SEP)
}

/**
 * Rows of one statement gathered column by column and sent as one array per column: `make(from)` is the statement
 * around `unnest(…)` (see unnestOf), used where VALUES would go (`FROM ${from} AS v(a, b)`). One statement text
 * whatever the count, and one join or hash per send rather than per chunk of 2,048 rows: a VALUES chunk joined to a
 * table of tens of thousands of rows spent most of its time hashing the table. Columns of two or more rows travel as
 * one text each (a text value holding U+001F makes its statement send arrays instead). For text and numbers only:
 * bytea travels as hex text in arrays, several times slower than MultiRow's binary parameters.
 */
export class ArrayRows<R = unknown> implements Sendable {
  private cols: unknown[][]
  private packed?: Prepared
  private arrays?: Prepared

  /** On handle `q` (a transaction), each row `types.length` columns; `then` receives each statement's returned rows. */
  constructor(
    private q: Queryable,
    private p: Pipeline,
    private types: readonly string[],
    private make: (from: SQL) => SQL,
    private opts: { after?: Sendable[]; then?: (rows: R[]) => void } = {},
  ) {
    this.cols = types.map(() => [])
  }

  /** Rows gathered and not sent yet. */
  get pending() {
    return this.cols[0]!.length
  }

  /** Adds one row (its columns in the order of `types`), as a parameter would be sent (NUL in text as U+FFFD). */
  add(...row: Arg[]) {
    for (let i = 0; i < row.length; i++) this.cols[i]!.push(param(row[i]))
    if (this.pending >= ARRAY_ROWS) this.send()
  }

  /** Sends every gathered row as one statement (the statements in `after` first). */
  send() {
    const n = this.pending
    if (!n) return
    for (const a of this.opts.after ?? []) a.send()
    const cols = this.cols
    this.cols = this.types.map(() => [])
    // One row stays an array: string_to_array('') is an empty array, not one empty text.
    let args: unknown[] | null = n > 1 ? [] : null
    for (let j = 0; args && j < cols.length; j++) {
      const v = this.types[j] === 'text' ? packText(cols[j]!) : cols[j]!.join(SEP)
      if (v === null) args = null
      else args.push(v)
    }
    let stmt: Prepared
    if (args) stmt = this.packed ??= prepare(this.q, this.make(unnestOf(this.types, true)))
    else (stmt = this.arrays ??= prepare(this.q, this.make(unnestOf(this.types)))), (args = cols)
    const then = this.opts.then
    if (then) this.p.add(stmt.all<R>(...(args as never[])), then)
    else this.p.add(stmt.write(...(args as never[])))
  }
}
