// Contract §17: while the database refuses writes (a real SQLite SQLITE_READONLY: the connection is made query-only,
// as a read-only or failing disk would make it), /readyz answers 503, writes answer 503 `Database not writable`
// instead of 500, reads go on, and Salt health names it; all of it clears once writes succeed again.
import { expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { isWriteFailure } from '../../src/db/writable'

test('writes refused by the database: readyz and writes 503 `Database not writable`, reads work, Salt health names it, all clear after', async () => {
  const w = await testWorld()
  expect((await call(w, 'GET', '/readyz', { who: 'anon' })).status).toBe(200)
  expect((await call(w, 'GET', '/api/salt/health')).body).toMatchObject({ database: { writable: true, since: null, error: null } })

  w.deps.db.$client.exec('PRAGMA query_only = ON')
  expect(await call(w, 'GET', '/readyz', { who: 'anon' })).toMatchObject({ status: 503, body: { detail: 'Database not writable' } })
  const create = await call(w, 'POST', '/api/roles', { body: { name: 'auditors' } })
  expect(create).toMatchObject({ status: 503, body: { detail: 'Database not writable' } })
  expect((await call(w, 'GET', '/api/roles')).status).toBe(200)
  const h = (await call(w, 'GET', '/api/salt/health')).body
  expect(h.database).toMatchObject({ writable: false, since: expect.any(String), error: 'attempt to write a readonly database' })
  expect(h.problems).toContainEqual(expect.stringMatching(/^The database cannot be written since .* \(attempt to write a readonly database\): changes are not stored/))

  w.deps.db.$client.exec('PRAGMA query_only = OFF')
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
