/**
 * The two migration sets agree: after migrating, every table and column SQLite has (drizzle/) exists in PostgreSQL
 * (drizzle-pg/) with a matching type class and nullability, and the other way round; every index exists in both with
 * the same uniqueness and partialness; the triggers match. What only one engine has is listed here, with why.
 */
import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { testDb } from '../helpers/migrations'
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { is } from 'drizzle-orm'
import * as schema from '../../src/db/schema'

/** drizzle's record of applied SQLite migrations; saltdeck_migrations is PostgreSQL's. */
const ONLY_SQLITE_TABLES = ['__drizzle_migrations']
/**
 * SQLite's activity search index lives in search.db (FTS5, its watermark there); PostgreSQL's is activity_search
 * (pg_trgm over one text per event) fed from activity_search_queue (drizzle-pg 0008).
 */
const ONLY_PG_TABLES = ['saltdeck_migrations', 'activity_search', 'activity_search_queue']
const ONLY_PG_INDEXES = ['minion_package_sets_num_unique', 'activity_xid']
/** Queues each inserted event for PostgreSQL's search index (SQLite's indexer reads past its watermark instead). */
const ONLY_PG_TRIGGERS = ['activity_events.activity_search_enqueue']
/**
 * A minion's number is its package-set row's rowid on SQLite; PostgreSQL has no rowid, so the row carries it in this
 * identity column (schema-pg.ts PG_ONLY_COLUMNS), with its unique index above. An activity event's inserting
 * transaction (drizzle-pg/0006): PostgreSQL commits ids out of order, SQLite's one writer never does; indexed above.
 */
const ONLY_PG_COLUMNS = ['minion_package_sets.num', 'activity_events.xid']

/** The PostgreSQL type a SQLite declared type becomes (schema-pg.ts); integer is bigint, or smallint for booleans. */
const TYPE_CLASS: Record<string, string[]> = { text: ['text'], integer: ['bigint', 'smallint'], real: ['double precision'], blob: ['bytea'], numeric: ['bigint', 'smallint'] }

test('every SQLite table, column, index and trigger exists in PostgreSQL with the same type class and nullability', async () => {
  const lite = openDb(':memory:')
  await migrate(lite)
  const pg = await testDb(':memory:', 'postgres')
  const c = lite.$client

  type Col = { table: string; column: string; type: string; notnull: boolean }
  const liteTables = c.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map((t) => t.name).filter((t) => !ONLY_SQLITE_TABLES.includes(t))
  const liteCols: Col[] = liteTables.flatMap((t) =>
    c.query<{ name: string; type: string; notnull: number; pk: number }, [string]>('SELECT name, type, "notnull", pk FROM pragma_table_info(?1)').all(t)
      // A primary key column holds no null on either engine (drizzle declares SQLite's NOT NULL too; an integer one is the rowid).
      .map((r) => ({ table: t, column: r.name, type: r.type.toLowerCase(), notnull: r.notnull === 1 || r.pk > 0 })))
  const pgCols = (await pg.rows<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    sql`SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`))
    .filter((r) => !ONLY_PG_TABLES.includes(r.table_name) && !ONLY_PG_COLUMNS.includes(`${r.table_name}.${r.column_name}`))
    .map((r): Col => ({ table: r.table_name, column: r.column_name, type: r.data_type, notnull: r.is_nullable === 'NO' }))

  const key = (x: Col) => `${x.table}.${x.column}`
  expect(pgCols.map(key).sort()).toEqual(liteCols.map(key).sort())
  const byKey = new Map(pgCols.map((x) => [key(x), x]))
  const mismatched = liteCols.filter((l) => {
    const p = byKey.get(key(l))!
    return !(TYPE_CLASS[l.type] ?? []).includes(p.type) || p.notnull !== l.notnull
  }).map((l) => ({ sqlite: l, postgres: byKey.get(key(l)) }))
  expect(mismatched).toEqual([])
  expect(liteCols.length).toBeGreaterThan(300)
  // smallint is exactly the boolean columns (0/1 on both engines); every other integer is bigint.
  const booleans = Object.values(schema).filter((t) => is(t, SQLiteTable)).flatMap((t) => {
    const cfg = getTableConfig(t as SQLiteTable)
    return cfg.columns.filter((col) => col.columnType === 'SQLiteBoolean').map((col) => `${cfg.name}.${col.name}`)
  })
  expect(pgCols.filter((p) => p.type === 'smallint').map(key).sort()).toEqual(booleans.sort())

  type Ix = { name: string; table: string; unique: boolean; partial: boolean }
  const liteIx: Ix[] = liteTables.flatMap((t) =>
    c.query<{ name: string; unique: number; partial: number; origin: string }, [string]>('SELECT name, "unique", partial, origin FROM pragma_index_list(?1)').all(t)
      // Primary keys' own indexes (origin pk, and unnamed sqlite_autoindex_*) are the tables' primary keys, compared with the columns.
      .filter((i) => i.origin !== 'pk' && !i.name.startsWith('sqlite_autoindex_'))
      .map((i) => ({ name: i.name, table: t, unique: i.unique === 1, partial: i.partial === 1 })))
  const pgIx = (await pg.rows<{ name: string; table: string; unique: boolean; partial: boolean }>(sql`
    SELECT ci.relname AS name, t.relname AS "table", x.indisunique AS "unique", x.indpred IS NOT NULL AS partial
    FROM pg_index x JOIN pg_class ci ON ci.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = 'public' AND NOT x.indisprimary`))
    .filter((i) => !ONLY_PG_INDEXES.includes(i.name) && !ONLY_PG_TABLES.includes(i.table))
  const byName = (a: Ix, b: Ix) => a.name.localeCompare(b.name)
  expect(pgIx.sort(byName)).toEqual(liteIx.sort(byName))
  expect(liteIx.filter((i) => i.partial).length).toBeGreaterThan(0)

  // The tables' primary keys: the same columns on both.
  const litePk = liteTables.map((t) => `${t}(${c.query<{ name: string; pk: number }, [string]>('SELECT name, pk FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk').all(t).map((r) => r.name).join(',')})`)
  const pgPk = (await pg.rows<{ t: string; cols: string }>(sql`
    SELECT t.relname AS t, string_agg(a.attname, ',' ORDER BY k.i) AS cols
    FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, i) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
    WHERE n.nspname = 'public' AND x.indisprimary GROUP BY t.relname`))
    .filter((r) => !ONLY_PG_TABLES.includes(r.t)).map((r) => `${r.t}(${r.cols})`)
  expect(pgPk.sort()).toEqual(litePk.filter((p) => !p.endsWith('()')).sort())

  const liteTriggers = c.query<{ name: string; tbl_name: string }, []>("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'").all().map((r) => `${r.tbl_name}.${r.name}`)
  const pgTriggers = (await pg.rows<{ t: string }>(sql`SELECT DISTINCT event_object_table || '.' || trigger_name AS t FROM information_schema.triggers WHERE trigger_schema = 'public'`)).map((r) => r.t)
  expect(pgTriggers.filter((t) => !ONLY_PG_TRIGGERS.includes(t)).sort()).toEqual(liteTriggers.sort())
  await pg.close()
})
