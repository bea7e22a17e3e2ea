/**
 * The write probe on PostgreSQL (contract §17): a database whose transactions are read-only (a standby,
 * default_transaction_read_only) is not writable until they are not; a server that refuses connections is not either.
 */
import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { openPostgres } from '../../src/db/client'
import { checkWritable, isWriteFailure } from '../../src/db/writable'
import { freshPostgresUrl } from '../helpers/migrations'

test('checkWritable on PostgreSQL: null while writes work, the failure while transactions are read-only, null again after', async () => {
  const url = await freshPostgresUrl()
  const name = new URL(url).pathname.slice(1)
  const admin = openPostgres(url, { max: 1 })
  const db = openPostgres(url, { max: 1, idleSeconds: 1 })
  try {
    expect(await checkWritable(db, 1000)).toBeNull()
    // New sessions of the database start read-only: the probe's connection is replaced by one that is.
    await admin.exec(sql.raw(`ALTER DATABASE ${name} SET default_transaction_read_only = on`))
    await db.close()
    const ro = openPostgres(url, { max: 1 })
    const failed = await checkWritable(ro, 2000)
    expect(failed).toMatchObject({ since: 2000, error: expect.stringContaining('read-only transaction') })
    // Still failing: the first time it was seen stays.
    expect(await checkWritable(ro, 3000)).toMatchObject({ since: 2000 })
    await admin.exec(sql.raw(`ALTER DATABASE ${name} SET default_transaction_read_only = off`))
    await ro.close()
    const again = openPostgres(url, { max: 1 })
    expect(await checkWritable(again, 4000)).toBeNull()
    await again.close()
  } finally {
    await admin.close()
  }
}, 30_000)

test('a refused connection and PostgreSQL\'s write-failure SQLSTATEs are write failures; a constraint or a lock timeout is not', async () => {
  // Port 1: nothing listens there, so the connection is refused.
  const url = new URL(await freshPostgresUrl())
  url.port = '1'
  const gone = openPostgres(url.toString(), { max: 1 })
  const failed = await checkWritable(gone, 5000)
  expect(failed).toMatchObject({ since: 5000 })
  // As Bun.sql raises them: the server's SQLSTATE in errno under ERR_POSTGRES_SERVER_ERROR, its own codes for the
  // connection.
  const server = (errno: string) => Object.assign(new Error(errno), { code: 'ERR_POSTGRES_SERVER_ERROR', errno })
  const own = (code: string) => Object.assign(new Error(code), { code })
  for (const c of ['25006', '53100', '08006', '57P01']) expect(isWriteFailure(server(c))).toBe(true)
  for (const c of ['ERR_POSTGRES_CONNECTION_REFUSED', 'ERR_POSTGRES_CONNECTION_CLOSED', 'ERR_POSTGRES_CONNECTION_TIMEOUT']) expect(isWriteFailure(own(c))).toBe(true)
  for (const c of ['23505', '55P03', '40001', '42P01']) expect(isWriteFailure(server(c))).toBe(false)
  for (const c of ['ERR_POSTGRES_QUERY_CANCELLED', 'ERR_POSTGRES_SYNTAX_ERROR', '25006']) expect(isWriteFailure(own(c))).toBe(false)
  await gone.close()
}, 30_000)
