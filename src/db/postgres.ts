/** The PostgreSQL engine: postgres.js underneath, a pool of connections, a reserved connection per transaction. */
import postgres, { type Sql, type TransactionSql } from 'postgres'
import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Engine, Native, Queryable } from './engine'
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

/** Runs statements on a pool or on a transaction's connection. */
function direct(client: Sql | TransactionSql, native: Native): Queryable {
  const run = (q: SQL) => {
    const r = renderPostgres(q)
    return client.unsafe(r.sql, r.params as never[], { prepare: true })
  }
  return {
    engine: 'postgres',
    native,
    // A plain array: postgres.js answers a RowList (an Array carrying the statement and its columns).
    rows: async <T>(q: SQL) => [...(await run(q))] as unknown as T[],
    row: async <T>(q: SQL) => ((await run(q))[0] ?? undefined) as T | undefined,
    exec: async (q: SQL) => (await run(q)).count ?? 0,
  }
}

/**
 * Opens a pool to `url` (postgres://user:pass@host:port/db?sslmode=...) of at most `max` connections, each closed
 * after `idleSeconds` unused (never, by default).
 */
export function postgresEngine(url: string, opts: { max?: number; idleSeconds?: number } = {}): Engine {
  const client = postgres(url, {
    max: opts.max ?? 10,
    idle_timeout: opts.idleSeconds,
    onnotice: () => {},
    // int8 (counts, epoch milliseconds, ids) and numeric as JS numbers, as SQLite hands them: every integer Saltdeck
    // stores fits in 53 bits (milliseconds until the year 285,616).
    types: {
      int8: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
      numeric: { to: 1700, from: [1700], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    },
  })
  const native: Native = { engine: 'postgres', client }
  const pool = direct(client, native)
  return {
    ...pool,
    // A transaction's native client is its own connection, so per-engine modules inside it stay inside it.
    tx: <T>(fn: (tx: Queryable) => Promise<T>) =>
      client.begin((t) => fn(direct(t, { engine: 'postgres', client: t as unknown as Sql }))) as Promise<T>,
    close: () => client.end({ timeout: 5 }),
  }
}
