/**
 * Whether the database's schema is newer than this build (a rolling upgrade's newer instance migrated it, or an older
 * binary was started on a newer data directory): the migrations recorded in the database that this build does not
 * carry. Such an instance says so and takes no writes, rather than writing rows its code does not understand.
 */
import { sql } from './sql'
import type { Db } from './client'
import { migrations, pgMigrations } from './migrations.gen'

/** The sentence requests and readiness answer with while the schema is ahead (contract §15, rolling upgrades). */
export const SCHEMA_AHEAD = 'Database schema is newer than this Saltdeck: upgrade this instance (it takes no writes until then)'

/**
 * The newest migration the database has and this build lacks, or null when the build knows every one. PostgreSQL:
 * the tags in saltdeck_migrations (db/migrate.ts); SQLite: drizzle's record holds each migration's creation time
 * only, so a time past this build's newest migration.
 */
export async function schemaAhead(db: Db): Promise<string | null> {
  if (db.engine === 'postgres') {
    const known = new Set(pgMigrations.map((m) => m.tag))
    const rows = await db.rows<{ tag: string }>(sql`SELECT tag FROM saltdeck_migrations ORDER BY tag`)
    return rows.map((r) => r.tag).filter((t) => !known.has(t)).pop() ?? null
  }
  const newest = Math.max(...migrations.map((m) => m.when))
  const r = await db.row<{ at: number | null }>(sql`SELECT max(created_at) AS at FROM __drizzle_migrations`)
  return r?.at != null && Number(r.at) > newest ? `a migration made ${new Date(Number(r.at)).toISOString()}` : null
}
