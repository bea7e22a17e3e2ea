/** Settings and the audit log. */
import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'

/** One row per settings section (salt, pollers, widget, logging, meta); value is JSON. */
export const settings = sqliteTable('settings', {
  section: text('section').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * The salt sources beyond `default` (contract §15 "Several masters"), one row per salt-api. `default` is the settings'
 * salt section and has no row here. value is the same JSON document as that section (url, username, password_enc,
 * verify, eauth, presence_method), so one merge rule (settings/service.ts `mergeSalt`) serves both.
 */
export const saltSources = sqliteTable('salt_sources', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/** Who did what, when; newest first by id. */
export const auditLog = sqliteTable('audit_log', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  ts: integer('ts').notNull(),
  username: text('username'),
  action: text('action').notNull(),
  target: text('target'),
  ok: integer('ok', { mode: 'boolean' }).notNull(),
  detail: text('detail'),
  client: text('client'),
}, (t) => [index('audit_log_ts').on(t.ts)])

/**
 * The running Saltdeck instances on this database (contract §15), each writing its own row on a heartbeat; a row not
 * seen for a minute is no longer listed. `leads` is the JSON list of salt sources (and `fleet`) it leads; `health` the
 * state of the salt side of each.
 */
export const instances = sqliteTable('instances', {
  id: text('id').primaryKey(),
  hostname: text('hostname').notNull(),
  version: text('version').notNull(),
  engine: text('engine').notNull(),
  startedAt: integer('started_at').notNull(),
  lastSeenAt: integer('last_seen_at').notNull(),
  leads: text('leads').notNull().default('[]'),
  /**
   * The salt side's state of each salt source it leads, as JSON ({source: SaltHealthSnapshot}), written with each
   * heartbeat: Salt health on an instance that follows a source shows its leader's event stream and pollers.
   */
  health: text('health'),
}, (t) => [index('instances_last_seen').on(t.lastSeenAt)])
