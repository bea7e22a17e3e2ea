/**
 * Moving an install (`saltdeck migrate-to-postgres`, db/copy-to-postgres.ts): a SQLite install seeded with the demo
 * fleet (users, roles, settings with an encrypted salt password, history, inventory, findings, alerts) copied into a
 * fresh PostgreSQL database: every table's count the same, the password readable with the same key, identity columns
 * continuing after the copied ids, and a second copy into the now non-empty database refused.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { openPostgres } from '../../src/db/client'
import { copyToPostgres, CopyError, tablesInCopyOrder } from '../../src/db/copy-to-postgres'
import { activityEvents, packageKeys } from '../../src/db/schema'
import { getTableConfig } from 'drizzle-orm/sqlite-core'
import { attachSearchIndex } from '../../src/db/search-index'
import { recordEvents } from '../../src/features/activity/service'
import { loadConfig } from '../../src/config'
import { ManualClock } from '../../src/lib/clock'
import { Logger } from '../../src/lib/log'
import type { AppDeps } from '../../src/deps'
import { bootstrap } from '../../src/features/users/bootstrap'
import { loadSettings, saltCredentials, updateSection } from '../../src/features/settings/service'
import { seedDemo } from '../../src/demo/fleet'
import { freshPostgresUrl, testDb } from '../helpers/migrations'
import { lockDataDir } from '../../src/db/serve-lock'
import { runCli } from '../../src/cli'

const dir = mkdtempSync(join(tmpdir(), 'saltdeck-copy-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A SQLite install with the demo fleet and a salt password stored encrypted. */
async function sqliteInstall(): Promise<AppDeps> {
  const db = await testDb(join(dir, 'saltdeck.db'), 'sqlite')
  attachSearchIndex(db.$client)
  const deps: AppDeps = {
    db, clock: new ManualClock(), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32).fill(9),
    config: loadConfig({}, { adminPassword: 'admin-password-1', passwordMemoryKib: 256 }),
  }
  await bootstrap(deps, null, () => {})
  await updateSection(deps, 'salt', { url: 'https://salt.example:8000', username: 'saltdeck', password: 'pw-kept-secret' })
  await seedDemo(deps)
  return deps
}

test('every table is copied with the same count; the salt password reads with the same key; ids continue; a second copy is refused', async () => {
  const src = await sqliteInstall()
  const pg = openPostgres(await freshPostgresUrl())
  try {
    const seen: string[] = []
    const result = await copyToPostgres(src.db, pg, (t) => seen.push(t))
    const names = tablesInCopyOrder().map((t) => getTableConfig(t).name)
    expect(result.map((r) => r.table)).toEqual(names)
    for (const r of result) expect(r.copied).toBe(r.source)
    // The demo fills the tables an operator would miss: users, history, inventory, findings, alerts.
    const n = Object.fromEntries(result.map((r) => [r.table, r.copied]))
    for (const t of ['users', 'roles', 'settings', 'minions', 'runs', 'run_details', 'jobs', 'job_returns', 'activity_events',
      'minion_package_sets', 'package_holders', 'vuln_records', 'vuln_matches', 'vuln_minions', 'alert_rules', 'alerts'])
      expect([t, n[t] ?? 0]).not.toEqual([t, 0])
    expect(new Set(seen)).toContain('activity_events')

    // Rows are the same rows, not only as many: the stored (encrypted) password is byte for byte the same and reads
    // with the install's key.
    const enc = (await src.db.row<{ value: string }>(sql`SELECT value FROM settings WHERE section = 'salt'`))!.value
    expect((await pg.row<{ value: string }>(sql`SELECT value FROM settings WHERE section = 'salt'`))!.value).toBe(enc)
    const onPg: AppDeps = { ...src, db: pg }
    await loadSettings(onPg)
    expect((await saltCredentials(onPg)).password).toBe('pw-kept-secret')

    // A minion's package-set number is its SQLite rowid (the holder index's bits name minions by it), and every
    // event is the same event, column by column.
    const setNums = (rows: { minion_id: string; n: number }[]) => rows.map((r) => `${r.minion_id}=${r.n}`).sort()
    const sqliteSets = await src.db.rows<{ minion_id: string; n: number }>(sql`SELECT minion_id, rowid AS n FROM minion_package_sets`)
    expect(sqliteSets.length).toBeGreaterThan(0)
    expect(setNums(await pg.rows<{ minion_id: string; n: number }>(sql`SELECT minion_id, num AS n FROM minion_package_sets`))).toEqual(setNums(sqliteSets))
    const events = sql`SELECT id, ts, category, event_type, minion_id, jid, summary FROM ${activityEvents} ORDER BY id`
    expect(await pg.rows(events)).toEqual(await src.db.rows(events))

    // A new event gets the next id after the copied ones.
    const max = (await pg.row<{ m: number }>(sql`SELECT max(id) AS m FROM ${activityEvents}`))!.m
    const next = await pg.row<{ id: number }>(sql`INSERT INTO ${activityEvents} (ts, category, event_type, summary) VALUES (1, 'system', 'x', 'after the copy') RETURNING id`)
    expect(next!.id).toBe(max + 1)
    // The same for every column that is an identity on PostgreSQL, autoincrement on SQLite or not: a package key the
    // next refresh learns gets an id after the copied ones, not a copied one's.
    const maxKey = (await pg.row<{ m: number }>(sql`SELECT max(id) AS m FROM ${packageKeys}`))!.m
    expect(maxKey).toBeGreaterThan(0)
    const key = await pg.row<{ id: number }>(sql`INSERT INTO ${packageKeys} (name, version, arch) VALUES ('after-the-copy', '1', 'all') RETURNING id`)
    expect(key!.id).toBe(maxKey + 1)

    await expect(copyToPostgres(src.db, pg)).rejects.toThrow(CopyError)
  } finally {
    await pg.close()
  }
}, 120_000)

test('saltdeck migrate-to-postgres copies a stopped install, prints each table, and refuses while serve holds the data directory', async () => {
  const data = mkdtempSync(join(dir, 'cli-'))
  const db = await testDb(join(data, 'saltdeck.db'), 'sqlite')
  const deps: AppDeps = {
    db, clock: new ManualClock(), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32).fill(3),
    config: loadConfig({}, { adminPassword: 'admin-password-1', passwordMemoryKib: 256 }),
  }
  await bootstrap(deps, null, () => {})
  await recordEvents(deps, ['web-01', 'web-02', 'db-01'].map((id, i) => ({ ts: 1000 + i, category: 'minion', event_type: 'minion.start', minion_id: id, summary: `${id} started` })))
  db.$client.close()
  // Trust authentication ignores the password; it is there to be kept out of the output.
  const url = (await freshPostgresUrl()).replace('postgres@', 'postgres:s3cret-pw@')
  const out: string[] = []
  const err: string[] = []
  const log = console.log
  const error = console.error
  console.log = (s: string) => out.push(s)
  console.error = (s: string) => err.push(s)
  try {
    const held = lockDataDir(data)
    expect(await runCli(['migrate-to-postgres', '--data-dir', data, '--database-url', url])).toBe(1)
    expect(err.join('\n')).toContain('stop it first')
    held.release()
    expect(await runCli(['migrate-to-postgres', '--data-dir', data, '--database-url', url])).toBe(0)
  } finally {
    console.log = log
    console.error = error
  }
  const text = out.join('\n')
  expect(text).toMatch(/^ {2}users +1 → +1$/m)
  expect(text).toContain('every count matches')
  expect(text + err.join('\n')).not.toContain('s3cret-pw')
  const pg = openPostgres(url)
  try {
    expect((await pg.row<{ username: string }>(sql`SELECT username FROM users`))!.username).toBe('admin')
    // The search index is built by the command: nothing left queued, every copied event indexed.
    expect(text).toContain('Indexed 3 events for the activity search')
    expect(await pg.row(sql`SELECT (SELECT count(*) FROM activity_search_queue)::int AS queued, (SELECT count(*) FROM activity_search)::int AS indexed`)).toEqual({ queued: 0, indexed: 3 })
  } finally {
    await pg.close()
  }
}, 60_000)
