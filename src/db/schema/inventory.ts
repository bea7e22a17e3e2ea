/** Package inventory: raw per-minion rows plus aggregates kept current on every replacement. */
import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core'

/** One installed package version on one minion; clustered by minion for atomic replacement. */
export const minionPackages = sqliteTable('minion_packages', {
  minionId: text('minion_id').notNull(),
  name: text('name').notNull(),
  version: text('version').notNull(),
  arch: text('arch').notNull().default(''),
  source: text('source').notNull(),
}, (t) => [primaryKey({ columns: [t.minionId, t.name, t.version, t.arch] })])

/** Per-name aggregate; source '' is the aggregate over every source. */
export const packageStats = sqliteTable('package_stats', {
  source: text('source').notNull(),
  name: text('name').notNull(),
  minionCount: integer('minion_count').notNull(),
  versionCount: integer('version_count').notNull(),
  lastSeen: integer('last_seen').notNull(),
}, (t) => [
  primaryKey({ columns: [t.source, t.name] }),
  index('package_stats_minions').on(t.source, t.minionCount, t.name),
  index('package_stats_versions').on(t.source, t.versionCount, t.name),
  index('package_stats_seen').on(t.source, t.lastSeen, t.name),
  // Rolls the per-source last_seen up into the all-sources row without scanning the table.
  index('package_stats_name').on(t.name, t.lastSeen),
])

/** How many minions hold each (name, version, arch) of a source. */
export const packageVersions = sqliteTable('package_versions', {
  source: text('source').notNull(),
  name: text('name').notNull(),
  version: text('version').notNull(),
  arch: text('arch').notNull(),
  minionCount: integer('minion_count').notNull(),
}, (t) => [primaryKey({ columns: [t.source, t.name, t.version, t.arch] })])

/** How many minions holding a name were last collected at each time; last_seen is the latest time with holders. */
export const packageSeen = sqliteTable('package_seen', {
  source: text('source').notNull(),
  name: text('name').notNull(),
  seenAt: integer('seen_at').notNull(),
  n: integer('n').notNull(),
}, (t) => [primaryKey({ columns: [t.source, t.name, t.seenAt] })])

/** One inventory refresh: what was asked, what answered, how it ended. */
export const inventoryRefreshes = sqliteTable('inventory_refreshes', {
  id: text('id').primaryKey(),
  startedAt: integer('started_at').notNull(),
  finishedAt: integer('finished_at'),
  target: text('target').notNull(),
  minionsAsked: integer('minions_asked').notNull().default(0),
  minionsAnswered: integer('minions_answered').notNull().default(0),
  packagesStored: integer('packages_stored').notNull().default(0),
  error: text('error'),
})
