/** Applies the embedded migrations (no files on disk needed, so it works in the compiled binary), on either engine. */
import { createHash } from 'node:crypto'
import type { Db } from './client'
import type { PgClient } from './engine'
import { migrations, pgMigrations, type Migration } from './migrations.gen'

/**
 * The advisory lock key the PostgreSQL migrations run under (any constant both instances agree on): instances starting
 * together take turns, and the second finds everything applied.
 */
export const MIGRATE_LOCK_KEY = 0x5a17dec0

/** The table recording which PostgreSQL migrations ran (SQLite's are drizzle's __drizzle_migrations). */
const PG_TABLE = 'saltdeck_migrations'

/** Runs every migration the database has not seen yet, each in its own transaction. */
export async function migrate(db: Db): Promise<void> {
  if (db.native.engine === 'postgres') return migratePostgres(db.native.client, pgMigrations)
  migrateSqlite(db, migrations)
}

/** SQLite: drizzle's migrator over the embedded list (its public migrate() reads a folder). */
export function migrateSqlite(db: Db, list: Migration[]) {
  const metas = list.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }))
  ;(db as any).dialect.migrate(metas, (db as any).session, {})
}

/**
 * PostgreSQL: on one reserved connection holding a session advisory lock for the whole run, each migration not yet
 * recorded runs in its own transaction with its record, in journal order.
 */
export async function migratePostgres(client: PgClient, list: Migration[]): Promise<void> {
  const conn = await client.reserve()
  try {
    await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATE_LOCK_KEY})`)
    try {
      await conn.unsafe(`CREATE TABLE IF NOT EXISTS ${PG_TABLE} (tag text PRIMARY KEY, hash text NOT NULL, applied_at bigint NOT NULL)`)
      const done = new Set((await conn.unsafe<{ tag: string }[]>(`SELECT tag FROM ${PG_TABLE}`)).map((r) => r.tag))
      for (const m of list) {
        if (done.has(m.tag)) continue
        const hash = createHash('sha256').update(m.sql).digest('hex')
        // BEGIN/COMMIT by hand: a reserved connection has no begin(), and the lock must stay on this connection.
        await conn.unsafe('BEGIN')
        try {
          for (const stmt of m.sql.split('--> statement-breakpoint')) if (stmt.trim()) await conn.unsafe(stmt)
          await conn.unsafe(`INSERT INTO ${PG_TABLE} (tag, hash, applied_at) VALUES ($1, $2, $3)`, [m.tag, hash, Date.now()])
          await conn.unsafe('COMMIT')
        } catch (e) {
          await conn.unsafe('ROLLBACK').catch(() => {})
          throw new Error(`migration ${m.tag} failed: ${(e as Error).message}`, { cause: e })
        }
      }
    } finally {
      // A broken connection has dropped its session lock already; its error is not the one to report.
      await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATE_LOCK_KEY})`).catch(() => {})
    }
  } finally {
    await conn.release()
  }
}
