/**
 * Statements prepared once and run many times on the handle they were prepared on: the inventory's and the matcher's
 * per-row loops (a flush writes one row per changed key, name and holder chunk). A statement is written once with the
 * `sql` tag and positional placeholders `$(1)`, `$(2)`…; on SQLite it is bun:sqlite's prepared statement run
 * synchronously (the engine's per-call rendering would cost these loops about as much as the writes themselves), on
 * PostgreSQL a named prepared statement of the transaction's connection.
 */
import { Placeholder, sql, type SQL } from 'drizzle-orm'
import type { Queryable } from './engine'
import { renderFast } from './render-walk'
import { param, pgRows, renderPostgres, send } from './postgres'

/** Positional placeholder `n` (1-based) of a prepared statement. */
export const $ = (n: number) => sql.placeholder(String(n))

type Arg = string | number | bigint | boolean | null | Uint8Array

/** A statement bound to a handle: rows changed, the first row, every row. SQLite answers at once, PostgreSQL by promise. */
export interface Prepared {
  run(...args: Arg[]): number | Promise<number>
  /** Runs it for its effect only (SQLite: bun:sqlite's own run, nothing made around it). */
  write(...args: Arg[]): unknown
  get<T>(...args: Arg[]): T | undefined | Promise<T | undefined>
  all<T>(...args: Arg[]): T[] | Promise<T[]>
  /** Frees an uncached statement (SQLite; PostgreSQL's go with their connection). */
  finalize(): void
}

/**
 * A prepared statement's SQLite text with `$(n)` written as SQLite's numbered parameter `?n`: the arguments bind in the
 * order they are given, with no array made per run to reorder them (the flush runs these 100,000 times).
 */
function numberedSqlite(stmt: SQL): string {
  const r = renderFast(stmt, (_, v) => {
    if (!(v instanceof Placeholder)) throw new Error('prepared statements take only $(n) placeholders as parameters')
    return `?${Number(v.name)}`
  })
  if (!r) throw new Error('a prepared statement holds SQL the renderer leaves to drizzle (an alias or a subquery object): write it with tables, columns and $(n)')
  return r.sql
}

/** The argument order of a rendered statement: each parameter's placeholder number, 0-based. */
function argOrder(params: unknown[]): number[] {
  return params.map((p) => {
    const name = (p as Placeholder).name
    if (typeof name !== 'string') throw new Error('prepared statements take only $(n) placeholders as parameters')
    return Number(name) - 1
  })
}

/**
 * Prepares `stmt` on `q` (the engine or a transaction; use it only while that handle is open). SQLite caches it by
 * its text unless `cached` is false (a statement on an attached database that goes away: finalize it).
 */
export function prepare(q: Queryable, stmt: SQL, opts: { cached?: boolean } = {}): Prepared {
  const native = q.native
  if (native.engine === 'sqlite') {
    const text = numberedSqlite(stmt)
    const s = opts.cached === false ? native.client.prepare(text) : native.client.query(text)
    // The arguments bind as they come: `?n` takes the n-th, however often and wherever the text names it.
    const run = s.run.bind(s) as (...a: Arg[]) => { changes: number }
    return {
      run: (...a) => run(...a).changes,
      write: run,
      get: <T>(...a: Arg[]) => (s.get(...(a as never[])) ?? undefined) as T | undefined,
      all: <T>(...a: Arg[]) => s.all(...(a as never[])) as T[],
      finalize: () => opts.cached === false && s.finalize(),
    }
  }
  const r = renderPostgres(stmt)
  const order = argOrder(r.params)
  const client = native.client
  const bind = (a: Arg[]) => order.map((o) => param(a[o]))
  // send() starts the query at once (Bun.sql's are lazy until awaited), so statements reach the connection in the
  // order they were run, whichever of these methods ran them and whenever their results are awaited.
  const exec = (a: Arg[]) => send(client, r.sql, bind(a))
  return {
    run: (...a) => exec(a).then((r) => r.count ?? 0),
    write: (...a) => exec(a).then((r) => r.count),
    get: <T>(...a: Arg[]) => exec(a).then((r) => pgRows.first(r) as T | undefined),
    all: <T>(...a: Arg[]) => exec(a).then((r) => pgRows.all(r) as T[]),
    finalize: () => {},
  }
}

/**
 * Writes issued in a loop without waiting for each: on SQLite each has run when it returns, so the loop stays
 * synchronous (an `await` per statement, and an async function around a hot loop, cost SQLite's loops a third more);
 * on PostgreSQL they queue in order on the transaction's connection and `drain` waits for them together. `then`
 * receives a write's result (rows changed) as soon as it is known: at once on SQLite, after a drain on PostgreSQL.
 */
export class Pipeline {
  private pending: Promise<unknown>[] = []

  /** Tracks one statement run (`write`, or `run` when `then` needs its result). */
  add<T>(r: T | Promise<T>, then?: (v: T) => void) {
    if (!(r instanceof Promise)) return then?.(r)
    const p = then ? r.then(then) : r
    // Awaited by drain; handled now so a failure while others are issued does not count as unhandled meanwhile.
    p.catch(() => {})
    this.pending.push(p)
  }

  /** Waits for every tracked write (rejects with the first failure). */
  async drain() {
    if (!this.pending.length) return
    const p = this.pending
    this.pending = []
    await Promise.all(p)
  }
}
