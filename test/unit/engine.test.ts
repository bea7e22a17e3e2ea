/**
 * The storage engine's contract (db/engine.ts): statements, rows by column name, transactions and their order. Every
 * case runs on SQLite, and on PostgreSQL too under `bun run test:pg` (SALTDECK_TEST_ENGINE=postgres).
 */
import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { twin, type EngineKind } from '../../src/db/engine'
import { minions } from '../../src/db/schema'
import type { Row } from '../../src/db/row'
import { TEST_ENGINE, testDb } from '../helpers/migrations'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { attachSearchIndex } from '../../src/db/search-index'

const engines: EngineKind[] = TEST_ENGINE === 'postgres' ? ['sqlite', 'postgres'] : ['sqlite']

for (const engine of engines) {
  const fresh = () => testDb(':memory:', engine)

  describe(`engine on ${engine}`, () => {
    test('rows come keyed by column name, booleans as 0/1, and exec counts the rows it changed', async () => {
      const db = await fresh()
      const n = await db.exec(sql`INSERT INTO ${minions} (id, online, updated_at) VALUES (${'web-01'}, ${true}, ${5}), (${'web-02'}, ${false}, ${6})`)
      expect(n).toBe(2)
      const rows = await db.rows<Pick<Row<typeof minions>, 'id' | 'online' | 'key_state'>>(
        sql`SELECT ${minions.id}, ${minions.online}, ${minions.keyState} FROM ${minions} ORDER BY ${minions.id}`)
      expect(rows).toEqual([{ id: 'web-01', online: 1, key_state: null }, { id: 'web-02', online: 0, key_state: null }])
      expect(await db.row(sql`SELECT id FROM ${minions} WHERE id = ${'nope'}`)).toBeUndefined()
      expect(await db.exec(sql`UPDATE ${minions} SET online = 0 WHERE id IN ${['web-01', 'web-02']}`)).toBe(2)
    })

    test('long statements, and many shapes of one place, run right: a 600-row write, lists of every length up to 300', async () => {
      const db = await fresh()
      const ids = Array.from({ length: 600 }, (_, i) => `m-${String(i).padStart(3, '0')}`)
      // Over 8 KB of text and over 256 parameters: rendered every time, and on SQLite prepared for this run alone.
      const values = ids.map((id, i) => sql`(${id}, ${i})`)
      expect(await db.exec(sql`INSERT INTO ${minions} (id, updated_at) VALUES ${sql.join(values, sql`, `)}`)).toBe(600)
      for (let n = 1; n <= 300; n++) {
        const some = ids.slice(0, n)
        const got = await db.row<{ n: number; last: string }>(sql`SELECT count(*) AS n, max(${minions.id}) AS last FROM ${minions} WHERE ${minions.id} IN ${some}`)
        expect(got).toEqual({ n, last: some.at(-1)! })
      }
    })

    test('a transaction commits when its function resolves and rolls back when it throws', async () => {
      const db = await fresh()
      await db.tx(async (tx) => {
        await tx.exec(sql`INSERT INTO ${minions} (id, updated_at) VALUES (${'a'}, 1)`)
      })
      await expect(db.tx(async (tx) => {
        await tx.exec(sql`INSERT INTO ${minions} (id, updated_at) VALUES (${'b'}, 1)`)
        throw new Error('boom')
      })).rejects.toThrow('boom')
      expect((await db.rows<{ id: string }>(sql`SELECT id FROM ${minions}`)).map((r) => r.id)).toEqual(['a'])
    })

    test("the engine's own statements wait for an open transaction instead of running inside it", async () => {
      const db = await fresh()
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const t = db.tx(async (tx) => {
        await tx.exec(sql`INSERT INTO ${minions} (id, updated_at) VALUES (${'in-tx'}, 1)`)
        await gate
        throw new Error('rolled back')
      })
      // Issued while the transaction is open: it must not become part of it (and be rolled back with it).
      const outside = db.exec(sql`INSERT INTO ${minions} (id, updated_at) VALUES (${'outside'}, 1)`)
      await Bun.sleep(5)
      release()
      await expect(t).rejects.toThrow('rolled back')
      expect(await outside).toBe(1)
      expect((await db.rows<{ id: string }>(sql`SELECT id FROM ${minions}`)).map((r) => r.id)).toEqual(['outside'])
    })

    test('twin picks the form for the engine', async () => {
      const db = await fresh()
      expect(twin(db, { sqlite: 'a', postgres: 'b' })).toBe(engine === 'sqlite' ? 'a' : 'b')
    })
  })
}

describe('engine on sqlite: the write lock', () => {
  test("a transaction holds main's write lock from its start, and not search.db's, which the indexer thread writes meanwhile", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sd-lock-'))
    const db = await testDb(join(dir, 'saltdeck.db'), 'sqlite')
    attachSearchIndex(db.$client)
    // Another connection, as the indexer thread's: it must never wait for the main thread's transactions on search.db.
    const other = new Database(join(dir, 'saltdeck.db'))
    other.exec('PRAGMA busy_timeout = 0')
    attachSearchIndex(other)
    const tryWrite = (stmt: string) => {
      try {
        other.exec('BEGIN')
        other.exec(stmt)
        other.exec('ROLLBACK')
        return 'written'
      } catch (e) {
        if (other.inTransaction) other.exec('ROLLBACK')
        return (e as Error).message
      }
    }
    const seen: string[] = []
    try {
      await db.tx(async (tx) => {
        // Before the transaction's first write: main is locked already, search.db is not.
        seen.push(tryWrite(`INSERT INTO main.minions (id, updated_at) VALUES ('x', 1)`))
        seen.push(tryWrite('UPDATE search.search_state SET watermark = watermark'))
        await tx.exec(sql`INSERT INTO ${minions} (id, updated_at) VALUES (${'a'}, 1)`)
      })
      expect(seen).toEqual(['database is locked', 'written'])
      expect((await db.rows<{ id: string }>(sql`SELECT id FROM ${minions}`)).map((r) => r.id)).toEqual(['a'])
    } finally {
      other.close()
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
