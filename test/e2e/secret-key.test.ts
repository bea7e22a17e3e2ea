/**
 * The secret key (contract §15): an instance whose key does not open the database's secrets says so at start and
 * refuses to serve; SALTDECK_SECRET_KEY_FILE names a key kept outside the data directory (never created there). On
 * both engines (test/pg/secret-key-shared.test.ts: two instances on one PostgreSQL).
 */
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { startServe, databaseEnv, type Served } from '../helpers/serve'
import { TEST_ENGINE } from '../helpers/migrations'
import { WRONG_KEY } from '../../src/features/settings/key-check'
import { encrypt } from '../../src/lib/secret'

setDefaultTimeout(60_000)

const env = { SALTDECK_ADMIN_PASSWORD: 'secret-key-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' }
let served: Served | null = null
afterEach(async () => {
  await served?.stop()
  served = null
})

/** Starts serve on `dir` and expects it to refuse with WRONG_KEY. */
async function expectRefused(dir: string, more: Record<string, string> = {}) {
  const err = await startServe(dir, { ...env, ...more }).then(() => null, (e: Error) => e.message)
  expect(err).toContain(WRONG_KEY)
}

/** Runs one statement on the data directory's database, whichever engine it is. */
async function onDatabase(dir: string, statement: string) {
  if (TEST_ENGINE === 'postgres') {
    const pg = new SQL((await databaseEnv(dir, {})).SALTDECK_DATABASE_URL!)
    await pg.unsafe(statement)
    await pg.close()
  } else {
    const db = new Database(join(dir, 'saltdeck.db'))
    db.run(statement)
    db.close()
  }
}

test('another key than the one the database was first served with: refused at start with the reason; the right one serves', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-key-'))
  served = await startServe(dir, env)
  await served.stop()
  served = null
  const right = readFileSync(join(dir, 'secret.key'))
  writeFileSync(join(dir, 'secret.key'), randomBytes(32), { mode: 0o600 })
  await expectRefused(dir)
  writeFileSync(join(dir, 'secret.key'), right, { mode: 0o600 })
  served = await startServe(dir, env)
  expect((await fetch(`${served.url}/readyz`)).status).toBe(200)
})

test('SALTDECK_SECRET_KEY_FILE: the key is read from there, none is created in the data directory, a missing file is an error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-keyfile-'))
  const keyFile = join(mkdtempSync(join(tmpdir(), 'saltdeck-keys-')), 'shared.key')
  writeFileSync(keyFile, randomBytes(32), { mode: 0o600 })
  served = await startServe(dir, { ...env, SALTDECK_SECRET_KEY_FILE: keyFile })
  await served.stop()
  served = null
  expect(existsSync(join(dir, 'secret.key'))).toBe(false)
  // Without the variable the data directory's own (new) key is not the one the database knows.
  await expectRefused(dir)
  rmSync(join(dir, 'secret.key'))
  const missing = await startServe(dir, { ...env, SALTDECK_SECRET_KEY_FILE: `${keyFile}.gone` }).then(() => null, (e: Error) => e.message)
  expect(missing).toContain('does not exist')
  copyFileSync(keyFile, join(dir, 'secret.key'))
  served = await startServe(dir, env)
  expect((await fetch(`${served.url}/readyz`)).status).toBe(200)
})

test('an install from before the check: its stored salt password decides; a key that opens it seals the check', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-key-old-'))
  served = await startServe(dir, env)
  await served.stop()
  served = null
  const right = readFileSync(join(dir, 'secret.key'))
  // As an older build left it: a salt password sealed under the key, and no check row.
  await onDatabase(dir, `DELETE FROM settings WHERE section = 'key_check'`)
  await onDatabase(dir, `INSERT INTO settings (section, value, updated_at) VALUES ('salt', '${JSON.stringify({ password_enc: encrypt(right, 'salt-pw') })}', 1) ON CONFLICT (section) DO UPDATE SET value = excluded.value`)
  writeFileSync(join(dir, 'secret.key'), randomBytes(32), { mode: 0o600 })
  await expectRefused(dir)
  writeFileSync(join(dir, 'secret.key'), right, { mode: 0o600 })
  served = await startServe(dir, env)
  await served.stop()
  served = null
  // The check is sealed now: another key is refused by it even without the salt password.
  await onDatabase(dir, `DELETE FROM settings WHERE section = 'salt'`)
  writeFileSync(join(dir, 'secret.key'), randomBytes(32), { mode: 0o600 })
  await expectRefused(dir)
})
