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

test('a statement with fragments inside renders once per shape: same fragments and list lengths reuse the text', () => {
  const { r, renders } = counting()
  const where = (conds: ReturnType<typeof sql>[]) => sql` WHERE ${sql.join(conds, sql` AND `)}`
  const page = (conds: ReturnType<typeof sql>[], limit: number) =>
    r(sql`SELECT ${minions.id} FROM ${minions}${where(conds)} ORDER BY ${minions.id} LIMIT ${limitOf(limit)} OFFSET ${0}`)
  const os = (v: string) => sql`${minions.os} = ${v}`
  const inIds = (ids: string[]) => sql`${minions.id} IN ${ids}`
  const a = page([os('Debian'), inIds(['a', 'b'])], 20)
  expect(a).toEqual({ sql: 'SELECT "minions"."id" FROM "minions" WHERE "minions"."os" = ? AND "minions"."id" IN (?, ?) ORDER BY "minions"."id" LIMIT 20 OFFSET ?', params: ['Debian', 'a', 'b', 0] })
  const n = renders()
  // The same shape with other values: the kept text, these values.
  expect(page([os('Alma'), inIds(['c', 'd'])], 20)).toEqual({ ...a, params: ['Alma', 'c', 'd', 0] })
  expect(renders()).toBe(n)
  // Another list length, another LIMIT, another order of the conditions, another column: each its own text.
  expect(page([os('Alma'), inIds(['c'])], 20).sql).toContain('IN (?) ORDER')
  expect(page([os('Alma'), inIds(['c'])], 50).sql).toEndWith('LIMIT 50 OFFSET ?')
  expect(page([inIds(['c']), os('Alma')], 50)).toEqual({
    sql: 'SELECT "minions"."id" FROM "minions" WHERE "minions"."id" IN (?) AND "minions"."os" = ? ORDER BY "minions"."id" LIMIT 50 OFFSET ?', params: ['c', 'Alma', 0],
  })
  expect(r(sql`SELECT 1 FROM ${minions}${where([sql`${minions.osrelease} = ${'12'}`])}`).sql).toBe('SELECT 1 FROM "minions" WHERE "minions"."osrelease" = ?')
  expect(r(sql`SELECT 1 FROM ${minions}${where([sql`${minions.os} = ${'12'}`])}`).sql).toBe('SELECT 1 FROM "minions" WHERE "minions"."os" = ?')
  // Separators and raw text are part of the shape: OR is not AND.
  expect(r(sql`SELECT 1 FROM ${minions} WHERE ${sql.join([os('x'), os('y')], sql` OR `)}`).sql).toBe('SELECT 1 FROM "minions" WHERE "minions"."os" = ? OR "minions"."os" = ?')
  expect(r(sql`SELECT 1 FROM ${minions} WHERE ${sql.join([os('x'), os('y')], sql.raw(' AND '))}`).sql).toBe('SELECT 1 FROM "minions" WHERE "minions"."os" = ? AND "minions"."os" = ?')
})

test('a kept rendering is handed out with the same entry each time (an engine hangs its prepared statement on it)', () => {
  const kept = keptRenderer(renderSqlite)
  const flat = (id: string) => kept(sql`SELECT 1 FROM ${minions} WHERE ${minions.id} = ${id}`)
  flat('a')
  expect(flat('b').kept).toBeDefined()
  expect(flat('c').kept).toBe(flat('d').kept!)
  const nested = (ids: string[]) => kept(sql`SELECT 1 FROM ${minions} WHERE ${minions.id} IN ${ids}`)
  nested(['a'])
  expect(nested(['b']).kept).toBe(nested(['c']).kept!)
  expect(nested(['b', 'c']).kept).not.toBe(nested(['c']).kept)
  // drizzle's own params are rendered every time, never kept.
  const own = (v: string) => kept(sql`SELECT 1 FROM ${minions} WHERE ${minions.id} = ${drizzleSql.param(v)}`)
  own('a')
  expect(sp(own('b'))).toEqual({ sql: 'SELECT 1 FROM "minions" WHERE "minions"."id" = ?', params: ['b'] })
  expect(own('b').kept).toBeUndefined()
})

test('a statement of more parameters than a shape keeps (a multi-row write) renders every time, right', () => {
  const { r, renders } = counting()
  const kept = keptRenderer(renderSqlite)
  const write = (n: number) => sql`INSERT INTO ${minions} (id, updated_at) VALUES ${sql.join(Array.from({ length: n }, (_, i) => sql`(${`m${i}`}, ${i})`), sql`, `)}`
  const a = r(write(200))
  expect(a.params).toHaveLength(400)
  expect(a.sql).toStartWith('INSERT INTO "minions" (id, updated_at) VALUES (?, ?), (?, ?)')
  const n = renders()
  expect(r(write(200))).toEqual(a)
  expect(renders()).toBe(n + 1)
  expect(kept(write(200)).kept).toBeUndefined()
  // A short one of the same place is kept.
  kept(write(2))
  expect(kept(write(2)).kept).toBeDefined()
})

test('a fragment without parameters is part of a kept flat text while the same object sits in its place', () => {
  const kept = keptRenderer(renderSqlite)
  const COLS = sql`${minions.id}, ${minions.os}`
  const page = (id: string, limit: number, cols = COLS) => kept(sql`SELECT ${cols} FROM ${minions} WHERE ${minions.id} > ${id} LIMIT ${limitOf(limit)}`)
  const a = page('a', 50)
  const b = page('b', 50)
  expect(sp(b)).toEqual({ sql: 'SELECT "minions"."id", "minions"."os" FROM "minions" WHERE "minions"."id" > ? LIMIT 50', params: ['b'] })
  // Kept flat after the first rendering: one entry for every call.
  expect(b.kept).toBeDefined()
  expect(page('b2', 50).kept).toBe(b.kept!)
  // Another LIMIT, or another fragment in the same place (even one with parameters), renders its own text.
  expect(sp(page('c', 10))).toEqual({ sql: 'SELECT "minions"."id", "minions"."os" FROM "minions" WHERE "minions"."id" > ? LIMIT 10', params: ['c'] })
  expect(sp(page('d', 50, sql`${minions.id}, ${'x'} AS tag`))).toEqual({ sql: 'SELECT "minions"."id", ? AS tag FROM "minions" WHERE "minions"."id" > ? LIMIT 50', params: ['x', 'd'] })
  expect(sp(page('e', 50))).toEqual({ sql: sp(a).sql, params: ['e'] })
})

test('sql.empty() is one fragment that cannot be appended to, and a statement holding it renders right', () => {
  expect(sql.empty()).toBe(sql.empty())
  expect(() => sql.empty().append(sql`x`)).toThrow()
  const kept = keptRenderer(renderSqlite)
  const list = (f?: ReturnType<typeof sql>) => sp(kept(sql`SELECT ${minions.id} FROM ${minions}${f ?? sql.empty()} LIMIT ${limitOf(5)}`))
  expect(list()).toEqual({ sql: 'SELECT "minions"."id" FROM "minions" LIMIT 5', params: [] })
  expect(list(sql` WHERE ${minions.id} = ${'a'}`)).toEqual({ sql: 'SELECT "minions"."id" FROM "minions" WHERE "minions"."id" = ? LIMIT 5', params: ['a'] })
  expect(list()).toEqual({ sql: 'SELECT "minions"."id" FROM "minions" LIMIT 5', params: [] })
})

test('fragments written with the tag keep a statement flat: each variant of a place its own text, parameters in order', () => {
  const { r, renders } = counting()
  // A condition given or not, as a store writes one: two templates in one place, each with its own parameters.
  const at = (name: string, cond: ReturnType<typeof sql>) => r(sql`SELECT ${jobs.jid} FROM ${jobs} WHERE ${jobs.user} = ${name} AND ${cond} AND ${jobs.jid} <> ${'t'}`)
  const list = (name: string, source?: string) =>
    at(name, source ? sql`${jobs.fun} = ${source}` : sql`${jobs.fun} IN (SELECT ${minions.id} FROM ${minions} WHERE ${minions.os} = ${name} AND ${minions.id} <> ${''})`)
  const one = 'SELECT "jobs"."jid" FROM "jobs" WHERE "jobs"."user" = ? AND "jobs"."fun" = ? AND "jobs"."jid" <> ?'
  const all = 'SELECT "jobs"."jid" FROM "jobs" WHERE "jobs"."user" = ? AND "jobs"."fun" IN (SELECT "minions"."id" FROM "minions" WHERE "minions"."os" = ? AND "minions"."id" <> ?) AND "jobs"."jid" <> ?'
  for (let i = 0; i < 3; i++) {
    expect(list('a', 'apt')).toEqual({ sql: one, params: ['a', 'apt', 't'] })
    expect(list(`b${i}`)).toEqual({ sql: all, params: [`b${i}`, `b${i}`, '', 't'] })
  }
  // Each variant rendered once; the rest reused their kept text.
  expect(renders()).toBe(2)
  // A fragment that is not flat in that place (sql.join's conditions) goes by shape, and the kept variants still hold.
  const joined = at('j', sql.join([sql`${jobs.fun} = ${'f'}`, sql`${jobs.jid} = ${'g'}`], sql` OR `))
  expect(joined).toEqual({ sql: 'SELECT "jobs"."jid" FROM "jobs" WHERE "jobs"."user" = ? AND "jobs"."fun" = ? OR "jobs"."jid" = ? AND "jobs"."jid" <> ?', params: ['j', 'f', 'g', 't'] })
  expect(list('c', 'rpm')).toEqual({ sql: one, params: ['c', 'rpm', 't'] })
  expect(list('d')).toEqual({ sql: all, params: ['d', 'd', '', 't'] })
  // A column where the kept variant had a parameter (or another template inside) is not that variant, and is right.
  expect(at('x', sql`${jobs.fun} = ${jobs.user}`))
    .toEqual({ sql: 'SELECT "jobs"."jid" FROM "jobs" WHERE "jobs"."user" = ? AND "jobs"."fun" = "jobs"."user" AND "jobs"."jid" <> ?', params: ['x', 't'] })
})
