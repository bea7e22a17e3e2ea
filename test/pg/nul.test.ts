/** PostgreSQL text cannot hold NUL (SQLite's can): the engine binds a NUL as U+FFFD rather than failing the statement. */
import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { users } from '../../src/db/schema'
import { testDb } from '../helpers/migrations'

test('a NUL in a text parameter: a filter matches nothing, a value keeps the rest', async () => {
  const db = await testDb(':memory:', 'postgres')
  try {
    expect(await db.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${users} WHERE ${users.username} = ${'ad\0min'}`)).toEqual({ n: 0 })
    expect(await db.row<{ v: string }>(sql`SELECT ${'a\0b'}::text AS v`)).toEqual({ v: 'a\uFFFDb' })
  } finally {
    await db.close()
  }
}, 30_000)
