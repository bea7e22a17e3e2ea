/**
 * Where an import's records wait before one transaction replaces the feeds: staging tables, per engine. SQLite keeps
 * them in a scratch database file attached as `vstage` (feed-staging-sqlite.ts), filled a batch per transaction;
 * PostgreSQL in temporary tables dropped at commit (feed-staging-postgres.ts), so staging and the replacement run in
 * one transaction there. Either way the replacing SQL (feeds.ts, which picks the engine's) names them through
 * `StagingTables`.
 */
import type { SQL } from 'drizzle-orm'
import type { Engine, Queryable } from '../../db/engine'

/** The staging tables as the engine names them. */
export interface StagingTables {
  records: SQL
  affected: SQL
  withdrawn: SQL
  /** Ids of the records an import's replacement touches (filled by the replacing transaction). */
  touched: SQL
}

/** How an import runs its staging batches and its replacing transaction. */
export interface StagingRun {
  tables: StagingTables
  /** Runs one staging batch (a transaction of its own, or a step of the one transaction). */
  batch(fn: (tx: Queryable) => Promise<void>): Promise<void>
  /** Runs the replacing transaction's work. */
  replace<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
}

/** One engine's staging. */
export interface FeedStaging {
  /** Creates the staging tables (SQLite: in a database file at `file`), runs `fn`, and removes them whatever happens. */
  run<T>(db: Engine, file: string, fn: (s: StagingRun) => Promise<T>): Promise<T>
}
