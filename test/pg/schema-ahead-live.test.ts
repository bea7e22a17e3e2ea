/** Rolling upgrades on PostgreSQL (contract §15): a running instance notices a newer build's migration and stops its writers. */
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

test('a running instance notices a newer migration within its check (15 s) and stops taking writes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-ahead-live-'))
  served = await startServe(dir, env)
  expect((await login(served.url)).status).toBe(200)
  await recordNewerMigration(dir)
  const deadline = Date.now() + 25_000
  while ((await fetch(`${served.url}/readyz`)).status === 200 && Date.now() < deadline) await Bun.sleep(250)
  await expectReadOnly(served.url)
  expect(served.output()).toContain('a newer Saltdeck migrated the database')
})
