/** Applies the embedded drizzle migrations (no files on disk needed, so it works in the compiled binary). */
import { createHash } from 'node:crypto'
import type { Db } from './client'
import { migrations } from './migrations.gen'

/** Runs every migration the database has not seen yet, in one transaction per drizzle's migrator. */
export function migrate(db: Db): void {
  const metas = migrations.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }))
  // drizzle's public migrate() reads a folder; its dialect takes the same list we build from embedded text.
  ;(db as any).dialect.migrate(metas, (db as any).session, {})
}
