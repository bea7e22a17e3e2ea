// Proves migration 0026: an existing database's minions get the list of sources their sightings hold, in name order.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { migrateBefore } from '../helpers/migrations'

const dir = mkdtempSync(join(tmpdir(), 'sd-sources-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test("0026 fills each minion's sources from its sightings, in name order (none: null)", async () => {
  const db = openDb(join(dir, 'saltdeck.db'))
  migrateBefore(db, '0026_minion_sources_column')
  const c = db.$client
  c.exec("INSERT INTO minions (id, updated_at) VALUES ('both', 1), ('one', 1), ('none', 1)")
  c.exec("INSERT INTO minion_sources (minion_id, source, first_seen_at, last_seen_at) VALUES ('both', 'west', 1, 1), ('both', 'default', 1, 1), ('one', 'default', 1, 1)")
  await migrate(db)
  expect(c.query('SELECT id, sources FROM minions ORDER BY id').all()).toEqual([
    { id: 'both', sources: 'default,west' }, { id: 'none', sources: null }, { id: 'one', sources: 'default' },
  ])
  db.$client.close()
})
