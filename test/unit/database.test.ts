// Proves the embedded migrations (every drizzle/ file, idempotent on :memory:) and the pragmas of a file database.
import { expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.gen'

test('the embedded migration module holds every drizzle/ migration and migrates :memory:', async () => {
  expect(migrations.map((m) => `${m.tag}.sql`)).toEqual(readdirSync('drizzle').filter((f) => f.endsWith('.sql')).sort())
  const db = openDb(':memory:')
  await migrate(db)
  await migrate(db) // applying twice is a no-op
  const tables = db.$client.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((t) => t.name)
  expect(tables).toEqual(expect.arrayContaining(['users', 'roles', 'role_permissions', 'user_roles', 'sessions', 'settings', 'audit_log', 'minions', 'jobs', 'runs', 'activity_events', 'activity_counts', 'minion_package_sets', 'package_keys', 'package_stats', 'package_versions', 'inventory_refreshes']))
})

test('a file database runs in WAL mode with foreign keys and synchronous=NORMAL', () => {
  const path = `${require('node:os').tmpdir()}/sd-pragma-${process.pid}.db`
  const db = openDb(path)
  const q = (p: string) => Object.values(db.$client.query(`PRAGMA ${p}`).get() as object)[0]
  expect(q('journal_mode')).toBe('wal')
  expect(q('foreign_keys')).toBe(1)
  expect(q('synchronous')).toBe(1)
  expect(q('busy_timeout')).toBe(5000)
  db.$client.close()
})
