/**
 * Test helper: databases at a known schema. `migrateBefore` brings a SQLite database to an older schema, to prove what
 * a later migration does to existing data; `testDb` opens a fresh migrated database on the engine the run tests
 * (`SALTDECK_TEST_ENGINE=postgres`: a new PostgreSQL database cloned from a template migrated once per process).
 */
import { sql } from 'drizzle-orm'
import type { Db } from '../../src/db/client'
import { openDb, openPostgres } from '../../src/db/client'
import { migrate, migrateSqlite } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.gen'
import { sharedCluster } from './pg-cluster'

/** Applies the embedded SQLite migrations up to (not including) the one tagged `stop`. */
export function migrateBefore(db: Db, stop: string) {
  const upto = migrations.findIndex((m) => m.tag === stop)
  if (upto < 0) throw new Error(`no migration ${stop}`)
  migrateSqlite(db, migrations.slice(0, upto))
}

/** The engine this test run uses: SQLite unless SALTDECK_TEST_ENGINE=postgres. */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.SALTDECK_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

/** The migrated template every PostgreSQL test database is cloned from (CREATE DATABASE ... TEMPLATE: milliseconds). */
const TEMPLATE = 'saltdeck_template'

let template: Promise<void> | undefined
let seq = 0

/** Creates and migrates the template database once per process. */
function migratedTemplate(): Promise<void> {
  template ??= (async () => {
    const cluster = sharedCluster()
    const admin = openPostgres(cluster.url())
    try {
      await admin.exec(sql.raw(`CREATE DATABASE ${TEMPLATE}`))
    } finally {
      await admin.close()
    }
    const t = openPostgres(cluster.url(TEMPLATE))
    try {
      await migrate(t)
    } finally {
      // A template must have no connections while it is copied.
      await t.close()
    }
  })()
  return template
}

/** The URL of a fresh, migrated, empty PostgreSQL database of the process's cluster. */
export async function freshPostgresUrl(): Promise<string> {
  await migratedTemplate()
  const cluster = sharedCluster()
  const name = `saltdeck_t${process.pid}_${++seq}`
  const admin = openPostgres(cluster.url())
  try {
    await admin.exec(sql.raw(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`))
  } finally {
    await admin.close()
  }
  return cluster.url(name)
}

/**
 * A fresh migrated database on `engine` (the run's engine unless given): SQLite at `sqlitePath` (`:memory:` by
 * default), or a new PostgreSQL database of the process's cluster.
 */
export async function testDb(sqlitePath = ':memory:', engine = TEST_ENGINE): Promise<Db> {
  // A few connections per world, closed when idle: a test file opens dozens of worlds, never closed, on one cluster
  // (max_connections 200).
  if (engine === 'postgres') return openPostgres(await freshPostgresUrl(), { max: 3, idleSeconds: 2 })
  const db = openDb(sqlitePath)
  await migrate(db)
  return db
}
