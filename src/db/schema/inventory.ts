/** Package inventory: one package-set row per minion plus aggregates kept current on every replacement. */
import { sqliteTable, text, integer, blob, index, uniqueIndex, primaryKey } from 'drizzle-orm/sqlite-core'

/** One (name, version, arch) that some minion holds; package sets refer to it by id. */
export const packageKeys = sqliteTable('package_keys', {
  id: integer('id').primaryKey(),
  name: text('name').notNull(),
  version: text('version').notNull(),
  arch: text('arch').notNull(),
  /** The source package this key was built from, learned once from one minion that has it; null until learned. */
  sourceName: text('source_name'),
  /** When learning was last tried for this key (epoch ms), so a key no minion answers for is not asked every refresh. */
  sourceTriedAt: integer('source_tried_at'),
}, (t) => [uniqueIndex('package_keys_name').on(t.name, t.version, t.arch), index('package_keys_source').on(t.sourceName)])

/**
 * Which minions hold each key: minion numbers (minion_package_sets' rowid) in chunks of 4,096, each a sorted array of
 * uint16 offsets while it has fewer than 256 holders, else a 512-byte bitmap; kept by the writer with every set it
 * replaces, so "who holds this version" needs no scan of the sets.
 */
export const packageHolders = sqliteTable('package_holders', {
  chunk: integer('chunk').notNull(),
  keyId: integer('key_id').notNull(),
  bits: blob('bits', { mode: 'buffer' }).notNull(),
}, (t) => [primaryKey({ columns: [t.chunk, t.keyId] })])

/** One minion's whole package set in one row: its source, when and through which salt source it was collected, and its package_keys ids. */
export const minionPackageSets = sqliteTable('minion_package_sets', {
  minionId: text('minion_id').primaryKey(),
  source: text('source').notNull(),
  collectedAt: integer('collected_at').notNull(),
  /** The salt source (master) the set was collected through (contract §15 "Several masters"). */
  saltSource: text('salt_source').notNull().default('default'),
  /** The ids as little-endian uint32, in no particular order (a migration can build it with unhex/printf). */
  keys: blob('keys', { mode: 'buffer' }).notNull(),
})

/** Bumped whenever package_keys gains or loses rows, so a writer holding ids in memory knows to reload them. */
export const packageKeyGeneration = sqliteTable('package_key_generation', {
  id: integer('id').primaryKey(),
  generation: integer('generation').notNull(),
})

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
