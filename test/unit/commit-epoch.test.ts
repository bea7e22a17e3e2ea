/**
 * The commit epoch (db/commit-epoch.ts) and the values kept until it moves (db/until-commit.ts): a SQLite file's WAL
 * index read without a statement moves with every commit, whoever commits (this connection, another one, another
 * process), and with a checkpoint, and never with reads alone.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { openDb } from '../../src/db/client'
import { untilCommit } from '../../src/db/until-commit'

const dir = mkdtempSync(join(tmpdir(), 'sd-epoch-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('the epoch moves with each commit from any connection or process and a checkpoint, not with reads', async () => {
  const file = join(dir, 'a.db')
  const db = openDb(file)
  await db.exec(sql`CREATE TABLE t (x INTEGER)`)
  const e0 = db.commitEpoch()
  expect(e0).not.toBeNull()
  await db.rows(sql`SELECT * FROM t`)
  expect(db.commitEpoch()).toBe(e0)

  await db.exec(sql`INSERT INTO t VALUES (1)`)
  const e1 = db.commitEpoch()!
  expect(e1).not.toBe(e0)
  expect(db.commitEpoch()).toBe(e1)

  // Another connection in this process.
  const other = openDb(file)
  await other.exec(sql`INSERT INTO t VALUES (2)`)
  const e2 = db.commitEpoch()!
  expect(e2).not.toBe(e1)

  // Another process.
  const p = Bun.spawnSync(['bun', '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(file)}); d.run('INSERT INTO t VALUES (3)'); d.close()`])
  expect(p.exitCode).toBe(0)
  const e3 = db.commitEpoch()!
  expect(e3).not.toBe(e2)

  // A checkpoint that restarts the WAL, then a commit into the restarted WAL.
  db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const e4 = db.commitEpoch()!
  expect(e4).not.toBe(e3)
  await db.exec(sql`INSERT INTO t VALUES (4)`)
  expect(db.commitEpoch()).not.toBe(e4)

  // A transaction that rolls back commits nothing.
  const e5 = db.commitEpoch()
  await expect(db.tx(async (tx) => {
    await tx.exec(sql`INSERT INTO t VALUES (5)`)
    throw new Error('no')
  })).rejects.toThrow('no')
  expect(db.commitEpoch()).toBe(e5)
  other.$client.close()
  db.$client.close()
})

test('a kept value is read again only after a commit; an in-memory database reads it every time', async () => {
  const db = openDb(join(dir, 'b.db'))
  await db.exec(sql`CREATE TABLE v (n INTEGER)`)
  await db.exec(sql`INSERT INTO v VALUES (1)`)
  let reads = 0
  const current = untilCommit(async (q) => {
    reads++
    return (await q.row<{ n: number }>(sql`SELECT n FROM v`))!.n
  })
  expect(await current(db)).toBe(1)
  expect(await current(db)).toBe(1)
  expect(await current(db)).toBe(1)
  expect(reads).toBe(1)
  const p = Bun.spawnSync(['bun', '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(join(dir, 'b.db'))}); d.run('UPDATE v SET n = 2'); d.close()`])
  expect(p.exitCode).toBe(0)
  expect(await current(db)).toBe(2)
  expect(reads).toBe(2)
  db.$client.close()

  const mem = openDb(':memory:')
  expect(mem.commitEpoch()).toBeNull()
  await mem.exec(sql`CREATE TABLE v (n INTEGER)`)
  await mem.exec(sql`INSERT INTO v VALUES (7)`)
  expect(await current(mem)).toBe(7)
  expect(await current(mem)).toBe(7)
  expect(reads).toBe(4)
})

test('a database opened through a symbolic link is watched where SQLite keeps its -shm file', async () => {
  mkdirSync(join(dir, 'real'))
  const real = join(dir, 'real', 'c.db')
  const first = openDb(real)
  await first.exec(sql`CREATE TABLE t (x INTEGER)`)
  symlinkSync(real, join(dir, 'link.db'))
  const db = openDb(join(dir, 'link.db'))
  await db.rows(sql`SELECT * FROM t`)
  const e0 = db.commitEpoch()
  expect(e0).not.toBeNull()
  await first.exec(sql`INSERT INTO t VALUES (1)`)
  expect(db.commitEpoch()).not.toBe(e0)
  first.$client.close()
  db.$client.close()
})
