/**
 * db/multi-row.ts on PostgreSQL: every row gathered arrives once, in order, whatever the count (full chunks, then
 * power-of-two pieces), RETURNING rows reach `then`, and a statement named in `after` has its pending rows sent first.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { openPostgres, type Db } from '../../src/db/client'
import { Pipeline } from '../../src/db/prepared'
import { ArrayRows, MultiRow, valuesList } from '../../src/db/multi-row'
import { freshPostgresUrl } from '../helpers/migrations'

let db: Db
beforeAll(async () => {
  db = openPostgres(await freshPostgresUrl(), { max: 2 })
  await db.exec(sql.raw('CREATE TABLE mr (i bigint PRIMARY KEY, t text NOT NULL, b bytea, n bigint NOT NULL DEFAULT 0)'))
}, 120_000)
afterAll(() => db.close())

test('a VALUES list has one cast placeholder per column and row, numbered row by row', () => {
  const q = new PgDialect().sqlToQuery(sql`VALUES ${valuesList(2, ['bigint', 'text'])}`)
  expect(q.sql).toBe('VALUES ($1::bigint, $2::text), ($3::bigint, $4::text)')
})

for (const count of [0, 1, 7, 64, 65, 300, 1000]) {
  test(`${count} rows through chunks of 64: each stored once, every RETURNING row reaches then`, async () => {
    await db.exec(sql.raw('DELETE FROM mr'))
    const back: number[] = []
    await db.tx(async (tx) => {
      const p = new Pipeline()
      const ins = new MultiRow<{ i: number }>(tx, p, ['bigint', 'text', 'bytea'], (v) => sql`INSERT INTO mr (i, t, b) VALUES ${v} RETURNING i`, 64, { then: (rows) => rows.forEach((r) => back.push(r.i)) })
      for (let i = 0; i < count; i++) ins.add(i, `row ${i}`, new Uint8Array([i & 255, 1]))
      ins.send()
      await p.drain()
    })
    const rows = await db.rows<{ i: number; t: string; b: Uint8Array }>(sql`SELECT i, t, b FROM mr ORDER BY i`)
    expect(rows.map((r) => r.i)).toEqual(Array.from({ length: count }, (_, i) => i))
    expect(rows.every((r) => r.t === `row ${r.i}` && r.b[0] === (r.i & 255) && r.b[1] === 1)).toBe(true)
    expect(back.sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i))
  })
}

test('a statement with `after` sends the other\'s pending rows first (an update of rows still gathered for insert)', async () => {
  await db.exec(sql.raw('DELETE FROM mr'))
  await db.tx(async (tx) => {
    const p = new Pipeline()
    const ins = new MultiRow(tx, p, ['bigint', 'text'], (v) => sql`INSERT INTO mr (i, t) VALUES ${v}`, 100)
    const upd = new MultiRow(tx, p, ['bigint', 'bigint'], (v) => sql`UPDATE mr SET n = v.n FROM (VALUES ${v}) AS v(i, n) WHERE mr.i = v.i`, 4, { after: [ins] })
    // The updates fill their chunk (4) long before the inserts fill theirs (100): without `after` they would find no row.
    for (let i = 0; i < 10; i++) ins.add(i, 'x'), upd.add(i, i * 10)
    upd.send()
    ins.send()
    await p.drain()
  })
  expect((await db.rows<{ n: number }>(sql`SELECT n FROM mr ORDER BY i`)).map((r) => r.n)).toEqual(Array.from({ length: 10 }, (_, i) => i * 10))
})

test('a chunk wider than PostgreSQL\'s 65,535 parameters is refused when made', () => {
  expect(() => new MultiRow(db, new Pipeline(), ['bigint', 'text'], (v) => sql`INSERT INTO mr (i, t) VALUES ${v}`, 40_000)).toThrow('65535')
})

/** Texts that the packed form must carry as they are: empty, separator-like neighbours, quotes, braces, commas, NUL. */
const odd = ['', ' ', 'a,b', '{x}', '"q"', 'back\\slash', 'NULL', 'tab\tnl\n', '\x1d', 'ünï', 'nul\0in']

for (const [label, texts] of [
  ['plain texts (sent packed)', odd],
  ['a text holding U+001F (sent as arrays)', [...odd, 'sep\x1fin']],
  ['a text equal to U+001E (sent as arrays)', [...odd, '\x1e']],
] as const) {
  for (const count of [1, 2, 500]) {
    test(`ArrayRows, ${count} rows, ${label}: each row once with its texts, numbers and nulls`, async () => {
      await db.exec(sql.raw('DELETE FROM mr'))
      const back: number[] = []
      const want = Array.from({ length: count }, (_, i) => ({ i, t: texts[i % texts.length]!, n: i % 3 ? i * 1_000_000_007 : null }))
      await db.tx(async (tx) => {
        const p = new Pipeline()
        const ins = new ArrayRows<{ i: number }>(tx, p, ['bigint', 'text', 'bigint'], (v) => sql`INSERT INTO mr (i, t, n) SELECT v.i, v.t, coalesce(v.n, -1) FROM ${v} AS v(i, t, n) RETURNING i`, {
          then: (rows) => rows.forEach((r) => back.push(r.i)),
        })
        for (const w of want) ins.add(w.i, w.t, w.n)
        ins.send()
        await p.drain()
      })
      const rows = await db.rows<{ i: number; t: string; n: number }>(sql`SELECT i, t, n FROM mr ORDER BY i`)
      expect(rows).toEqual(want.map((w) => ({ i: w.i, t: w.t.replaceAll('\0', '\uFFFD'), n: w.n ?? -1 })))
      expect(back.sort((a, b) => a - b)).toEqual(want.map((w) => w.i))
    })
  }
}

test('ArrayRows: a null text arrives as null, an empty text as empty', async () => {
  const got = await db.tx(async (tx) => {
    const p = new Pipeline()
    let out: { t: string | null; e: boolean }[] = []
    const read = new ArrayRows<{ t: string | null; e: boolean }>(tx, p, ['text', 'bigint'], (v) => sql`SELECT v.t, v.t = '' AS e FROM ${v} AS v(t, k) ORDER BY v.k`, { then: (rows) => (out = rows) })
    read.add(null, 1)
    read.add('', 2)
    read.add('x', 3)
    read.send()
    await p.drain()
    return out
  })
  expect(got.map((r) => r.t)).toEqual([null, '', 'x'])
})

test('ArrayRows with `after` sends the other\'s pending rows first', async () => {
  await db.exec(sql.raw('DELETE FROM mr'))
  await db.tx(async (tx) => {
    const p = new Pipeline()
    const ins = new ArrayRows(tx, p, ['bigint', 'text'], (v) => sql`INSERT INTO mr (i, t) SELECT * FROM ${v}`)
    const upd = new ArrayRows(tx, p, ['bigint', 'bigint'], (v) => sql`UPDATE mr SET n = v.n FROM ${v} AS v(i, n) WHERE mr.i = v.i`, { after: [ins] })
    for (let i = 0; i < 10; i++) ins.add(i, 'x'), upd.add(i, i * 10)
    upd.send()
    await p.drain()
  })
  expect((await db.rows<{ n: number }>(sql`SELECT n FROM mr ORDER BY i`)).map((r) => r.n)).toEqual(Array.from({ length: 10 }, (_, i) => i * 10))
})
