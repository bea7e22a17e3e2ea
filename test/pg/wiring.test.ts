/** SALTDECK_DATABASE_URL opens PostgreSQL; ping, size, checkpoint and the collation check answer per engine. */
import { expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkpoint, collationWarning, dbSizeBytes, ping } from '../../src/db/client'
import { loadConfig } from '../../src/config'
import { openDatabase } from '../../src/server'
import { freshPostgresUrl } from '../helpers/migrations'

test('a database URL opens PostgreSQL, unset opens saltdeck.db in the data directory; both answer ping, size and checkpoint', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-wiring-'))
  const pg = openDatabase(loadConfig({ SALTDECK_DATABASE_URL: await freshPostgresUrl() }), dir)
  const lite = openDatabase(loadConfig({}), dir)
  expect([pg.engine, lite.engine]).toEqual(['postgres', 'sqlite'])
  expect(lite.$client.filename).toBe(join(dir, 'saltdeck.db'))
  for (const db of [pg, lite]) {
    expect(await ping(db)).toBe(true)
    expect(await dbSizeBytes(db)).toBeGreaterThan(0)
    await checkpoint(db)
    // The test cluster is made with collation C, as the README asks; SQLite has nothing to say.
    expect(await collationWarning(db)).toBeNull()
    await db.close()
    expect(await ping(db)).toBe(false)
  }
})
