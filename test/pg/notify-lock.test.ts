/**
 * The engine's primitives for several instances on one PostgreSQL database (src/db/pg-notify.ts, src/db/pg-lock.ts),
 * on the real cluster: notifications delivered at commit and after the listener's connection is killed; leadership
 * granted to one session at a time and its loss reported when its connection is killed. On SQLite both are inert.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { openPostgres, type Db } from '../../src/db/client'
import { listen, notify } from '../../src/db/pg-notify'
import { tryLeadership } from '../../src/db/pg-lock'
import { freshPostgresUrl, testDb } from '../helpers/migrations'
import { until } from '../helpers/until'

setDefaultTimeout(30_000)

let url: string
let a: Db
let b: Db
let admin: Db

beforeAll(async () => {
  url = await freshPostgresUrl()
  a = openPostgres(url, { max: 3 })
  b = openPostgres(url, { max: 3 })
  admin = openPostgres(url, { max: 1 })
})

afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), admin?.close()])
})

/** Terminates the backends of the database matching `where` (a condition on pg_stat_activity / pg_locks). */
async function kill(where: string): Promise<number> {
  const r = await admin.row<{ n: number }>(sql.raw(`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${where}`))
  return r!.n
}

describe('listen / notify', () => {
  test('a notification reaches every listener; in a transaction only at commit, never on rollback; unlisten stops it', async () => {
    const gotA: string[] = []
    const gotB: string[] = []
    const offA = await listen(a, 'saltdeck_test', (p) => gotA.push(p))
    const offB = await listen(b, 'saltdeck_test', (p) => gotB.push(p))
    try {
      await notify(a, 'saltdeck_test', 'plain')
      await until(() => gotA.length === 1 && gotB.length === 1)
      expect([gotA, gotB]).toEqual([['plain'], ['plain']])
      await a.tx(async (tx) => {
        await notify(tx, 'saltdeck_test', 'in-tx')
        await Bun.sleep(150)
        // Not before the commit.
        expect(gotB).toEqual(['plain'])
      })
      await until(() => gotB.length === 2)
      await expect(a.tx(async (tx) => {
        await notify(tx, 'saltdeck_test', 'rolled-back')
        throw new Error('rollback')
      })).rejects.toThrow('rollback')
      await notify(b, 'saltdeck_test', 'after \u0000 rollback')
      await until(() => gotB.length === 3 && gotA.length === 3)
      // The rolled-back one never came; a NUL is replaced as in every other text (PostgreSQL text holds none).
      expect(gotB).toEqual(['plain', 'in-tx', 'after \uFFFD rollback'])
      expect(gotA).toEqual(gotB)
      await offB()
      await notify(a, 'saltdeck_test', 'after unlisten')
      await until(() => gotA.length === 4)
      await Bun.sleep(100)
      expect(gotB.length).toBe(3)
    } finally {
      await offA()
      await offB()
    }
  })

  test("the listener's connection killed: it reconnects, subscribes again (onListen again), and hears later notifications", async () => {
    const got: string[] = []
    let listens = 0
    const off = await listen(b, 'saltdeck_kill', (p) => got.push(p), () => listens++)
    try {
      expect(listens).toBe(1)
      expect(await kill(`query ILIKE 'LISTEN%'`)).toBeGreaterThanOrEqual(1)
      await until(() => listens === 2, 'the listen again after the kill', { ms: 10_000 })
      await notify(a, 'saltdeck_kill', 'after the kill')
      await until(() => got.length === 1)
      expect(got).toEqual(['after the kill'])
    } finally {
      await off()
    }
  })
})

describe('leadership (session advisory lock)', () => {
  const KEY = 424_242

  test('one holder at a time; released, another takes it', async () => {
    const lost: Error[] = []
    const first = await tryLeadership(a, KEY, (e) => lost.push(e))
    expect(first).not.toBeNull()
    // Another instance, and another connection of the same pool, are both refused while it is held.
    expect(await tryLeadership(b, KEY, (e) => lost.push(e))).toBeNull()
    expect(await tryLeadership(a, KEY, (e) => lost.push(e))).toBeNull()
    // Refusals gave their connections back: the pool of 3 still runs 3 statements side by side beside the holder's.
    await Promise.all([1, 2].map(() => a.exec(sql`SELECT pg_sleep(0.01)`)))
    await first!.release()
    const second = await tryLeadership(b, KEY, (e) => lost.push(e))
    expect(second).not.toBeNull()
    await second!.release()
    expect(lost).toEqual([])
    // Released twice is harmless.
    await second!.release()
  })

  test('many leaderships share one connection: a pool of 3 still serves queries beside twelve of them', async () => {
    const lost: Error[] = []
    const held = await Promise.all(Array.from({ length: 12 }, (_, i) => tryLeadership(a, KEY + 100 + i, (e) => lost.push(e))))
    expect(held.every((h) => h !== null)).toBe(true)
    const holders = await admin.rows<{ pid: number }>(sql`SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND objid BETWEEN ${KEY + 100} AND ${KEY + 111} AND granted`)
    expect(holders.length).toBe(1)
    // The other two connections of the pool of 3 still run statements side by side.
    await Promise.all([1, 2].map(() => a.exec(sql`SELECT pg_sleep(0.01)`)))
    // Another instance is refused each; this one too (a session's locks would stack, so it keeps count).
    expect(await tryLeadership(b, KEY + 105, () => {})).toBeNull()
    expect(await tryLeadership(a, KEY + 105, () => {})).toBeNull()
    // One released is free for another instance, while the rest stay held.
    await held[5]!.release()
    const other = await tryLeadership(b, KEY + 105, () => {})
    expect(other).not.toBeNull()
    await other!.release()
    for (const h of held) await h!.release()
    expect(await admin.rows(sql`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid BETWEEN ${KEY + 100} AND ${KEY + 111} AND granted`)).toEqual([])
    expect(lost).toEqual([])
  })

  test("the holder's connection killed: onLost is called promptly, once, and another instance can take the lead", async () => {
    const lost: Error[] = []
    const held = await tryLeadership(a, KEY, (e) => lost.push(e), { checkMs: 60_000 })
    expect(held).not.toBeNull()
    const holder = await admin.row<{ pid: number }>(sql`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = ${KEY} AND granted`)
    expect(holder).toBeDefined()
    // Another connection of the same pool killed is no loss: the probe the close sets off finds the holder's session.
    const other = (await a.row<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`))!.pid
    expect(other).not.toBe(holder!.pid)
    expect(await kill(`pid = ${other}`)).toBe(1)
    await Bun.sleep(300)
    expect(lost).toEqual([])
    const t = performance.now()
    expect(await kill(`pid = ${holder!.pid}`)).toBe(1)
    // The pool hears the close: no waiting for the 60 s probe.
    await until(() => lost.length === 1, 'the loss reported', { ms: 5_000 })
    expect(performance.now() - t).toBeLessThan(5_000)
    const next = await tryLeadership(b, KEY, () => {})
    expect(next).not.toBeNull()
    await next!.release()
    await Bun.sleep(100)
    expect(lost.length).toBe(1)
    await held!.release()
  })

  test('a holder whose session stops answering (its backend stopped) is reported lost by the probe, and the lock freed', async () => {
    const lost: Error[] = []
    const held = await tryLeadership(a, KEY + 1, (e) => lost.push(e), { checkMs: 300 })
    expect(held).not.toBeNull()
    // Still held after several probes.
    await Bun.sleep(1_000)
    expect(lost).toEqual([])
    const holder = (await admin.row<{ pid: number }>(sql`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = ${KEY + 1} AND granted`))!
    // SIGSTOP: the session still exists and holds the lock, but answers nothing (a hung host, a network gone silent).
    process.kill(holder.pid, 'SIGSTOP')
    try {
      await until(() => lost.length === 1, 'the probe to give up', { ms: 5_000 })
      expect(lost[0]!.message).toContain('did not answer within 300 ms')
    } finally {
      process.kill(holder.pid, 'SIGCONT')
    }
    // The loss closed the connection: the resumed backend finds its client gone and ends, freeing the lock.
    const next = await until(() => tryLeadership(b, KEY + 1, () => {}), 'the lock to be free again', { ms: 10_000, every: 100 })
    await next.release()
    expect(lost.length).toBe(1)
  })
})

describe('on SQLite', () => {
  test('listen hears nothing, notify sends nothing, leadership is always granted', async () => {
    const db = await testDb(':memory:', 'sqlite')
    const got: string[] = []
    const off = await listen(db, 'x', (p) => got.push(p))
    await notify(db, 'x', 'y')
    await db.tx((tx) => notify(tx, 'x', 'z'))
    const one = await tryLeadership(db, 1, () => {})
    const two = await tryLeadership(db, 1, () => {})
    expect([one !== null, two !== null]).toEqual([true, true])
    await one!.release()
    await two!.release()
    await off()
    expect(got).toEqual([])
    await db.close()
  })
})
