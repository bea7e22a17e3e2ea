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
