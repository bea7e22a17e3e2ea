/** Statement text kept per place (db/render.ts): reused only while the values are parameters in the same places. */
import { expect, test } from 'bun:test'
import { sql as drizzleSql } from 'drizzle-orm'
import { limitOf, sql } from '../../src/db/sql'
import { keptRenderer } from '../../src/db/render'
import { renderPostgres } from '../../src/db/postgres'
import { renderSqlite } from '../../src/db/sqlite'
import { minions, jobs } from '../../src/db/schema'

/** Text and parameters only (drizzle's rendering also carries type hints). */
const sp = (x: { sql: string; params: unknown[] }) => ({ sql: x.sql, params: x.params })

/** A renderer over SQLite's that counts how often drizzle really rendered. */
function counting() {
  let n = 0
  const kept = keptRenderer((q) => {
    n++
    return renderSqlite(q)
  })
  return { r: (q: Parameters<typeof kept>[0]) => sp(kept(q)), renders: () => n }
}

test('one place renders once: later calls reuse the text with their own parameters', () => {
  const { r, renders } = counting()
  const at = (id: string, n: number) => r(sql`SELECT ${minions.id} FROM ${minions} WHERE ${minions.id} = ${id} AND ${minions.runCount} > ${n}`)
  const a = at('web-01', 1)
  const b = at('web-02', 7)
  expect(a.sql).toBe('SELECT "minions"."id" FROM "minions" WHERE "minions"."id" = ? AND "minions"."run_count" > ?')
  expect(b).toEqual({ sql: a.sql, params: ['web-02', 7] })
  expect(renders()).toBe(1)
})

test('a different column in the same place, a list or a fragment renders again and is right', () => {
  const { r, renders } = counting()
  const col = (c: typeof minions.id | typeof minions.os) => r(sql`SELECT ${c} FROM ${minions}`)
  expect(col(minions.id).sql).toBe('SELECT "minions"."id" FROM "minions"')
  expect(col(minions.os).sql).toBe('SELECT "minions"."os" FROM "minions"')
  const list = (ids: string[]) => r(sql`SELECT 1 FROM ${jobs} WHERE jid IN ${ids}`)
  expect(list(['a'])).toEqual({ sql: 'SELECT 1 FROM "jobs" WHERE jid IN (?)', params: ['a'] })
  expect(list(['a', 'b'])).toEqual({ sql: 'SELECT 1 FROM "jobs" WHERE jid IN (?, ?)', params: ['a', 'b'] })
  const where = (f: ReturnType<typeof sql>) => r(sql`SELECT 1 FROM ${jobs} WHERE ${f}`)
  expect(where(sql`fun = ${'x'}`)).toEqual({ sql: 'SELECT 1 FROM "jobs" WHERE fun = ?', params: ['x'] })
  expect(where(sql`"user" = ${'y'} AND 1 = ${1}`)).toEqual({ sql: 'SELECT 1 FROM "jobs" WHERE "user" = ? AND 1 = ?', params: ['y', 1] })
  // A parameter where a column was (or the reverse) is not the kept shape either.
  const mixed = (v: unknown) => r(sql`SELECT ${v as never} FROM ${jobs}`)
  expect(mixed(jobs.jid).sql).toBe('SELECT "jobs"."jid" FROM "jobs"')
  expect(mixed(5)).toEqual({ sql: 'SELECT ? FROM "jobs"', params: [5] })
  expect(renders()).toBeGreaterThanOrEqual(7)
})

test("drizzle's own tag still renders (every time), and PostgreSQL numbers its parameters", () => {
  expect(sp(renderSqlite(drizzleSql`SELECT ${1}`))).toEqual({ sql: 'SELECT ?', params: [1] })
  const pg = (id: string, on: boolean) => sp(renderPostgres(sql`UPDATE ${minions} SET online = ${on} WHERE id = ${id}`))
  expect(pg('a', true)).toEqual({ sql: 'UPDATE "minions" SET online = $1 WHERE id = $2', params: [1, 'a'] })
  expect(pg('b', false)).toEqual({ sql: 'UPDATE "minions" SET online = $1 WHERE id = $2', params: [0, 'b'] })
})

test('bytes and nulls are parameters', () => {
  const { r } = counting()
  const put = (b: Uint8Array | null) => r(sql`UPDATE ${minions} SET grains = ${b}`)
  expect(put(new Uint8Array([1, 2])).params[0]).toEqual(new Uint8Array([1, 2]))
  expect(put(null)).toEqual({ sql: 'UPDATE "minions" SET grains = ?', params: [null] })
})

test('a LIMIT is written into the text (SQLite re-plans a bound one on every run), an OFFSET stays a parameter; a bad count throws', () => {
  const page = (limit: number, offset: number) => renderSqlite(sql`SELECT ${minions.id} FROM ${minions} ORDER BY ${minions.id} LIMIT ${limitOf(limit)} OFFSET ${offset}`)
  expect(page(20, 40)).toEqual({ sql: 'SELECT "minions"."id" FROM "minions" ORDER BY "minions"."id" LIMIT 20 OFFSET ?', params: [40] })
  expect(page(50, 0).sql).toEndWith('LIMIT 50 OFFSET ?')
  for (const bad of [-1, 1.5, Number.NaN, 2 ** 60]) expect(() => limitOf(bad)).toThrow('LIMIT must be a non-negative integer')
})
