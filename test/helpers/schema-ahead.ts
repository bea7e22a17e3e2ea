/** Helpers of the rolling-upgrade tests: a migration from a newer build recorded, and an instance's read-only answers. */
import { expect } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { SQL } from 'bun'
import { SCHEMA_AHEAD } from '../../src/db/schema-version'
import { databaseEnv } from './serve'
import { TEST_ENGINE } from './migrations'

/** The admin password of the served instances. */
export const PW = 'schema-ahead-pw'
/** Their environment. */
export const env = { SALTDECK_ADMIN_PASSWORD: PW, SALTDECK_ARGON2_MEMORY_KIB: '1024' }
/** Logs in as admin (a write: it creates a session). */
export const login = (url: string) =>
  fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PW }) })

/** Records a migration this build does not carry, as a newer build's migrate would. */
export async function recordNewerMigration(dir: string) {
  if (TEST_ENGINE === 'postgres') {
    const pg = new SQL((await databaseEnv(dir, {})).SALTDECK_DATABASE_URL!)
    await pg.unsafe(`INSERT INTO saltdeck_migrations (tag, hash, applied_at) VALUES ('9999_from_a_newer_build', 'x', ${Date.now()})`)
    await pg.close()
  } else {
    const db = new Database(join(dir, 'saltdeck.db'))
    db.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', ['x', Date.now() + 365 * 86_400_000])
    db.close()
  }
}

/** The answers of an instance behind the schema: reads yes, readiness and every write no, with the sentence. */
export async function expectReadOnly(url: string) {
  expect((await fetch(`${url}/healthz`)).status).toBe(200)
  expect((await fetch(`${url}/api/version`)).status).toBe(200)
  const ready = await fetch(`${url}/readyz`)
  expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 503, body: { detail: SCHEMA_AHEAD } })
  const r = await login(url)
  expect({ status: r.status, body: await r.json() }).toEqual({ status: 503, body: { detail: SCHEMA_AHEAD } })
}
