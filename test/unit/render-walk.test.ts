// render-walk.ts renders prepared statements' $(n) placeholders as drizzle does (the text and the parameters, on both
// dialects), so prepare() maps each argument the same whichever renderer ran.
import { expect, test } from 'bun:test'
import { PgDialect } from 'drizzle-orm/pg-core'
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import { sql } from '../../src/db/sql'
import { $ } from '../../src/db/prepared'
import { renderFast } from '../../src/db/render-walk'
import { valuesList } from '../../src/db/multi-row'
import { packageHolders as h } from '../../src/db/schema'

const statements = [
  sql`UPDATE ${h} SET bits = ${$(3)} WHERE ${h.chunk} = ${$(1)} AND ${h.keyId} = ${$(2)}`,
  sql`INSERT INTO ${h} (chunk, key_id, bits) VALUES ${valuesList(3, ['bigint', 'bigint', 'bytea'])} ON CONFLICT (chunk, key_id) DO UPDATE SET bits = excluded.bits`,
]

test('placeholders render as drizzle renders them, on PostgreSQL and on SQLite', () => {
  for (const q of statements) {
    const pg = renderFast(q, (n) => `$${n + 1}`)!
    expect(pg).not.toBeNull()
    const dpg = new PgDialect().sqlToQuery(q)
    expect(pg).toEqual({ sql: dpg.sql, params: dpg.params })
    const lite = renderFast(q, () => '?')!
    const dlite = new SQLiteSyncDialect().sqlToQuery(q)
    expect(lite).toEqual({ sql: dlite.sql, params: dlite.params })
  }
  // The parameters are the placeholders themselves, in the order the text names them.
  expect(renderFast(statements[0]!, () => '?')!.params.map((p) => (p as { name: string }).name)).toEqual(['3', '1', '2'])
})
