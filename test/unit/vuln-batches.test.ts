// The pieces the vulnerability matcher's batches stand on: statements prepared once per connection (db/per-handle.ts)
// and PostgreSQL's row sets sent in fixed chunks (vulns/findings-postgres.ts `chunked`), every row once and in order.
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { sqliteEngine } from '../../src/db/sqlite'
import { perHandle } from '../../src/db/per-handle'
import { CHUNK, chunked } from '../../src/features/vulns/findings-postgres'

test('perHandle builds once per connection: the engine and its transactions share it, another connection gets its own', async () => {
  const a = sqliteEngine(new Database(':memory:'))
  const b = sqliteEngine(new Database(':memory:'))
  let made = 0
  const get = perHandle(() => ({ n: ++made }))
  const first = get(a)
  expect(get(a)).toBe(first)
  await a.tx(async (tx) => expect(get(tx)).toBe(first))
  const other = get(b)
  expect(other).not.toBe(first)
  expect(made).toBe(2)
  await a.close()
  await b.close()
})

test('chunked sends every row once, in order, CHUNK rows at most per statement, and sums the answers', async () => {
  for (const n of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7]) {
    const rows = Array.from({ length: n }, (_, i) => ({ i, s: `r${i}` }))
    const seen: { i: number; s: string }[][] = []
    const total = await chunked(rows, async (json) => {
      const part = JSON.parse(json) as { i: number; s: string }[]
      seen.push(part)
      return part.length
    })
    expect(total).toBe(n)
    expect(seen.length).toBe(Math.ceil(n / CHUNK))
    for (const part of seen) expect(part.length).toBeLessThanOrEqual(CHUNK)
    expect(seen.flat()).toEqual(rows)
  }
})
