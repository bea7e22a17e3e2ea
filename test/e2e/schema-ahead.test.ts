/**
 * Rolling upgrades (contract §15): an instance whose build is older than the database's schema (a newer instance
 * migrated it, or an older binary started on a newer data directory) says so and takes no writes, on either engine
 * (test/pg/schema-ahead-live.test.ts: a running instance on PostgreSQL notices).
 */
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { env, expectReadOnly, login, recordNewerMigration } from '../helpers/schema-ahead'

setDefaultTimeout(60_000)

let served: Served | null = null
afterEach(async () => {
  await served?.stop()
  served = null
})

test('started on a database a newer build migrated: reads served, readiness and writes refused with the reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-ahead-'))
  served = await startServe(dir, env)
  // The control: the same instance before the newer migration takes writes.
  expect((await login(served.url)).status).toBe(200)
  expect((await fetch(`${served.url}/readyz`)).status).toBe(200)
  await served.stop()
  await recordNewerMigration(dir)
  served = await startServe(dir, env)
  await expectReadOnly(served.url)
  expect(served.output()).toContain('the database schema is newer than this Saltdeck')
})
