/** Test helper: brings a database to an older schema, to prove what a later migration does to existing data. */
import { createHash } from 'node:crypto'
import type { Db } from '../../src/db/client'
import { migrations } from '../../src/db/migrations.gen'

/** Applies the embedded migrations up to (not including) the one tagged `stop`. */
export function migrateBefore(db: Db, stop: string) {
  const upto = migrations.findIndex((m) => m.tag === stop)
  if (upto < 0) throw new Error(`no migration ${stop}`)
  const metas = migrations.slice(0, upto).map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'), bps: m.breakpoints, folderMillis: m.when, hash: createHash('sha256').update(m.sql).digest('hex'),
  }))
  ;(db as any).dialect.migrate(metas, (db as any).session, {})
}
