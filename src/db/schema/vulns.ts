/** Vulnerability feeds (OSV records by ecosystem) and the findings kept current against the package inventory. */
import { sqliteTable, text, integer, real, index, primaryKey } from 'drizzle-orm/sqlite-core'

/** One OSV record: its own fields plus the fleet figures kept current by the matcher. */
export const vulnRecords = sqliteTable('vuln_records', {
  id: text('id').primaryKey(),
  /** JSON list of alias ids (CVE-…). */
  aliases: text('aliases').notNull(),
  summary: text('summary').notNull(),
  details: text('details').notNull(),
  severity: text('severity').notNull(),
  score: real('score'),
  published: text('published'),
  modified: text('modified'),
  /** JSON list of the package names the record names, over every ecosystem. */
  packages: text('packages').notNull(),
  /** JSON list of the fixed versions its ranges name. */
  fixedVersions: text('fixed_versions').notNull(),
  /** Minions affected now (kept by the matcher). */
  minionCount: integer('minion_count').notNull().default(0),
}, (t) => [index('vuln_records_count').on(t.minionCount, t.id), index('vuln_records_severity').on(t.severity, t.minionCount, t.id)])

/** One affected (ecosystem, package) of a record: its ECOSYSTEM ranges (JSON event lists) and listed versions. */
export const vulnAffected = sqliteTable('vuln_affected', {
  ecosystem: text('ecosystem').notNull(),
  package: text('package').notNull(),
  vulnId: text('vuln_id').notNull(),
  /** JSON: [[{introduced|fixed|last_affected: version}, …], …], one event list per range. */
  ranges: text('ranges').notNull(),
  /** JSON list of versions the record lists as affected. */
  versions: text('versions').notNull(),
}, (t) => [primaryKey({ columns: [t.ecosystem, t.package, t.vulnId] }), index('vuln_affected_package').on(t.package), index('vuln_affected_vuln').on(t.vulnId)])

/** One imported feed: an ecosystem and the import that last replaced it. */
export const vulnFeeds = sqliteTable('vuln_feeds', {
  ecosystem: text('ecosystem').primaryKey(),
  records: integer('records').notNull(),
  importedAt: integer('imported_at').notNull(),
  source: text('source').notNull(),
})

/** A package key that a record affects in an ecosystem, with the version that fixes it there (null: none yet). */
export const vulnMatches = sqliteTable('vuln_matches', {
  ecosystem: text('ecosystem').notNull(),
  keyId: integer('key_id').notNull(),
  vulnId: text('vuln_id').notNull(),
  /** The record's package name that matched (a source name, or the binary name when no source is known). */
  package: text('package').notNull(),
  fixed: text('fixed'),
}, (t) => [primaryKey({ columns: [t.ecosystem, t.keyId, t.vulnId] }), index('vuln_matches_vuln').on(t.vulnId, t.ecosystem, t.keyId), index('vuln_matches_key').on(t.keyId)])

/** Per minion (number = minion_package_sets' rowid): the ecosystem its findings were counted under, and their summary. */
export const vulnMinions = sqliteTable('vuln_minions', {
  minionNum: integer('minion_num').primaryKey(),
  minionId: text('minion_id').notNull(),
  ecosystem: text('ecosystem'),
  /** Records affecting the minion now, and the worst severity rank among them (0 none … 5 critical). */
  vulnCount: integer('vuln_count').notNull().default(0),
  worst: integer('worst').notNull().default(0),
}, (t) => [index('vuln_minions_id').on(t.minionId), index('vuln_minions_worst').on(t.worst, t.minionId)])

/** Moves whenever findings change, so a process holding them in memory (the service, beside a CLI import) reloads. */
export const vulnGeneration = sqliteTable('vuln_generation', {
  id: integer('id').primaryKey(),
  generation: integer('generation').notNull(),
})
