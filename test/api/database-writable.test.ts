// Contract §17: while the database refuses writes (a real SQLite SQLITE_READONLY: the connection is made query-only,
// as a read-only or failing disk would make it), /readyz answers 503, writes answer 503 `Database not writable`
// instead of 500, reads go on, and Salt health names it; all of it clears once writes succeed again.
import { expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { isWriteFailure } from '../../src/db/writable'
import { openPostgres, type Db } from '../../src/db/client'
import { sql } from '../../src/db/sql'
import { TEST_ENGINE } from '../helpers/migrations'
import { sharedCluster } from '../helpers/pg-cluster'

type World = Awaited<ReturnType<typeof testWorld>>

/**
 * Makes the world's database refuse writes, returning how to undo it. SQLite: the connection made query-only.
 * PostgreSQL: the database's transactions default to read-only, which only new sessions take, so the world runs on a
 * new pool meanwhile (and on another new one after, which proves the state is read again, not remembered).
 */
async function refuseWrites(w: World): Promise<() => Promise<void>> {
  if (TEST_ENGINE === 'sqlite') {
    w.deps.db.$client.exec('PRAGMA query_only = ON')
    return async () => void w.deps.db.$client.exec('PRAGMA query_only = OFF')
  }
  const name = (await w.deps.db.row<{ name: string }>(sql`SELECT current_database() AS name`))!.name
  const admin = openPostgres(sharedCluster().url(name), { max: 1 })
  const reopen = () => openPostgres(sharedCluster().url(name), { max: 3, idleSeconds: 2 })
  await admin.exec(sql.raw(`ALTER DATABASE ${name} SET default_transaction_read_only = on`))
  const was = w.deps.db
  ;(w.deps as { db: Db }).db = reopen()
  return async () => {
    await admin.exec(sql.raw(`ALTER DATABASE ${name} RESET default_transaction_read_only`))
    await admin.close()
    const ro = w.deps.db
    ;(w.deps as { db: Db }).db = reopen()
    await ro.close()
    await was.close()
  }
}

/** The error each engine reports for a write it refuses. */
const REFUSED = TEST_ENGINE === 'sqlite' ? 'attempt to write a readonly database' : 'in a read-only transaction'

test('writes refused by the database: readyz and writes 503 `Database not writable`, reads work, Salt health names it, all clear after', async () => {
  const w = await testWorld()
  expect((await call(w, 'GET', '/readyz', { who: 'anon' })).status).toBe(200)
  expect((await call(w, 'GET', '/api/salt/health')).body).toMatchObject({ database: { writable: true, since: null, error: null } })

  const allow = await refuseWrites(w)
  expect(await call(w, 'GET', '/readyz', { who: 'anon' })).toMatchObject({ status: 503, body: { detail: 'Database not writable' } })
  const create = await call(w, 'POST', '/api/roles', { body: { name: 'auditors' } })
  expect(create).toMatchObject({ status: 503, body: { detail: 'Database not writable' } })
  expect((await call(w, 'GET', '/api/roles')).status).toBe(200)
  const h = (await call(w, 'GET', '/api/salt/health')).body
  expect(h.database).toMatchObject({ writable: false, since: expect.any(String), error: expect.stringContaining(REFUSED) })
  expect(h.problems).toContainEqual(expect.stringMatching(new RegExp(`^The database cannot be written since .* \\(.*${REFUSED}\\): changes are not stored`)))

  await allow()
  expect((await call(w, 'GET', '/api/salt/health')).body).toMatchObject({ database: { writable: true, since: null, error: null } })
  expect((await call(w, 'GET', '/readyz', { who: 'anon' })).status).toBe(200)
  expect((await call(w, 'POST', '/api/roles', { body: { name: 'auditors' } })).status).toBe(201)
})

test('write failures are SQLite read-only, I/O, cannot-open, full and permission errors; a constraint or a busy lock is not', () => {
  const err = (code: string) => Object.assign(new Error('x'), { code })
  for (const c of ['SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_PERM']) expect(isWriteFailure(err(c))).toBe(true)
  for (const c of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_BUSY', 'SQLITE_FULLX', 'ENOSPC']) expect(isWriteFailure(err(c))).toBe(false)
  expect(isWriteFailure({ code: 'SQLITE_FULL' })).toBe(false)
})
