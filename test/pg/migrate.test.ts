/**
 * The PostgreSQL migrations (drizzle-pg/, db/migrate.ts): applied in order under an advisory lock, recorded, each once;
 * the twins of what SQLite's migrations create beside the tables (auth_version triggers, pg_trgm and the search index);
 * and a clear sentence when the role may not create pg_trgm.
 */
import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { openPostgres, type Db } from '../../src/db/client'
import { migrate, migratePostgres } from '../../src/db/migrate'
import { pgMigrations } from '../../src/db/migrations.gen'
import { readdirSync } from 'node:fs'
import { sharedCluster } from '../helpers/pg-cluster'

let n = 0
/** The URL of a new empty database of the test cluster, for `user` (postgres by default). */
async function emptyUrl(user = 'postgres', setup: (admin: Db, name: string) => Promise<void> = async () => {}): Promise<string> {
  const name = `saltdeck_mig_${process.pid}_${++n}`
  const admin = openPostgres(sharedCluster().url())
  try {
    await admin.exec(sql.raw(`CREATE DATABASE ${name}`))
    await setup(admin, name)
  } finally {
    await admin.close()
  }
  return sharedCluster().url(name).replace('postgres@', `${user}@`)
}

/** A new empty database of the test cluster, opened as `user`. */
const emptyDb = async (user?: string, setup?: (admin: Db, name: string) => Promise<void>) => openPostgres(await emptyUrl(user, setup))

const tables = (db: Db) =>
  db.rows<{ table_name: string }>(sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`)

test('the embedded PostgreSQL migrations are every drizzle-pg/ file, in order', () => {
  expect(pgMigrations.map((m) => `${m.tag}.sql`)).toEqual(readdirSync('drizzle-pg').filter((f) => f.endsWith('.sql')).sort())
})

test('two instances migrating one fresh database at once both succeed, with one schema and each migration once', async () => {
  const url = await emptyUrl()
  const [a, b] = [openPostgres(url), openPostgres(url)]
  await Promise.all([migrate(a), migrate(b)])
  const applied = await a.rows<{ tag: string }>(sql`SELECT tag FROM saltdeck_migrations ORDER BY tag`)
  expect(applied.map((r) => r.tag)).toEqual(pgMigrations.map((m) => m.tag))
  // A third start finds everything applied and changes nothing.
  const before = await tables(a)
  await migrate(a)
  expect(await tables(a)).toEqual(before)
  expect(before.map((t) => t.table_name)).toEqual(expect.arrayContaining(['users', 'minions', 'activity_events', 'saltdeck_migrations']))
  // The one-row tables hold their row, once.
  expect(await a.rows(sql`SELECT id, v FROM auth_version`)).toEqual([{ id: 1, v: 0 }])
  expect(await a.rows(sql`SELECT id, generation FROM package_key_generation`)).toEqual([{ id: 1, generation: 0 }])
  expect(await a.rows(sql`SELECT id, generation FROM vuln_generation`)).toEqual([{ id: 1, generation: 0 }])
  await Promise.all([a.close(), b.close()])
})

test('writes that change who is authenticated as what bump auth_version, as the SQLite triggers do', async () => {
  const db = await emptyDb()
  await migrate(db)
  const v = async () => (await db.row<{ v: number }>(sql`SELECT v FROM auth_version`))!.v
  await db.exec(sql`INSERT INTO users (id, username, username_key, password_hash, created_at, updated_at) VALUES ('u1', 'a', 'a', 'x', 1, 1)`)
  await db.exec(sql`INSERT INTO roles (id, name, name_key, created_at) VALUES ('r1', 'r', 'r', 1)`)
  expect(await v()).toBe(0)
  await db.exec(sql`INSERT INTO user_roles (user_id, role_id) VALUES ('u1', 'r1')`)
  expect(await v()).toBe(1)
  await db.exec(sql`INSERT INTO role_permissions (id, role_id, verb, resource_glob) VALUES ('p1', 'r1', 'view', '*')`)
  expect(await v()).toBe(2)
  await db.exec(sql`UPDATE users SET is_active = 0`)
  expect(await v()).toBe(3)
  await db.exec(sql`INSERT INTO sessions (id, token_hash, user_id, kind, created_at) VALUES ('s1', 'h', 'u1', 'session', 1)`)
  expect(await v()).toBe(3)
  // Deleting the role cascades to its grant and its holder: each deleted row bumps, as on SQLite.
  await db.exec(sql`DELETE FROM roles`)
  expect(await v()).toBe(6)
  await db.exec(sql`DELETE FROM users`)
  expect(await v()).toBe(8)
  await db.close()
})

test('the activity search has pg_trgm and a trigram GIN index of its own table, none on the insert path', async () => {
  const db = await emptyDb()
  await migrate(db)
  expect(await db.row(sql`SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'`)).toEqual({ extname: 'pg_trgm' })
  const ix = await db.row<{ indexdef: string }>(sql`SELECT indexdef FROM pg_indexes WHERE indexname = 'activity_search_doc_trgm'`)
  expect(ix!.indexdef).toContain('USING gin (doc gin_trgm_ops)')
  // activity_events carries no trigram index: the ingest's insert pays a b-tree entry in the queue, not a GIN per column.
  expect(await db.rows(sql`SELECT indexname FROM pg_indexes WHERE tablename = 'activity_events' AND indexdef LIKE '%gin%'`)).toEqual([])
  await db.close()
})

test('a role that may not create pg_trgm is told the statement to run, and no table is created', async () => {
  const db = await emptyDb('plain', async (admin, name) => {
    await admin.exec(sql.raw(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'plain') THEN CREATE ROLE plain LOGIN; END IF; END $$`))
    // May create tables (its own schema privileges), but not extensions (no CREATE on the database, not its owner).
    const scoped = openPostgres(sharedCluster().url(name))
    try {
      await scoped.exec(sql.raw('GRANT CREATE ON SCHEMA public TO plain'))
    } finally {
      await scoped.close()
    }
  })
  const err = await migrate(db).then(() => null, (e: Error) => e)
  expect(err?.message).toContain('CREATE EXTENSION IF NOT EXISTS pg_trgm;')
  expect(err?.message).toContain('0000_pg_trgm')
  const left = (await tables(db)).map((t) => t.table_name)
  expect(left.filter((t) => t !== 'saltdeck_migrations')).toEqual([])
  expect(await db.rows(sql`SELECT tag FROM saltdeck_migrations`)).toEqual([])
  await db.close()
})

test("a run whose sls list is long stores (PostgreSQL keys SQLite's covering runs index on its first columns)", async () => {
  const db = await emptyDb()
  await migrate(db)
  // About 17 KB of poorly compressible state file names: past a btree entry's 2,704 bytes.
  const sls = JSON.stringify(Array.from({ length: 400 }, (_, i) => `role.web.c${i}_${Math.random().toString(36).slice(2)}`))
  expect(await db.exec(sql`INSERT INTO runs (id, minion_id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status, sls)
    VALUES ('r1', 'web-01', '20261126120000000001', 'state.apply', 1, 0, 0, 0, 0, 0, 0, 'healthy', ${sls})`)).toBe(1)
  await db.close()
})

test("0011 fills each minion's sources from its sightings, in name order (none: null)", async () => {
  const db = await emptyDb()
  try {
    const client = db.native.client as never
    const at = pgMigrations.findIndex((m) => m.tag === '0011_minion_sources_column')
    await migratePostgres(client, pgMigrations.slice(0, at))
    await db.exec(sql`INSERT INTO minions (id, updated_at) VALUES ('both', 1), ('one', 1), ('none', 1)`)
    await db.exec(sql`INSERT INTO minion_sources (minion_id, source, first_seen_at, last_seen_at) VALUES ('both', 'west', 1, 1), ('both', 'default', 1, 1), ('one', 'default', 1, 1)`)
    await migratePostgres(client, pgMigrations.slice(at))
    expect(await db.rows(sql`SELECT id, sources FROM minions ORDER BY id`)).toEqual([
      { id: 'both', sources: 'default,west' }, { id: 'none', sources: null }, { id: 'one', sources: 'default' },
    ])
  } finally {
    await db.close()
  }
})
