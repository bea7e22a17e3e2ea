/** Alerts (contract §11): rules, alerts, silences, channels, and the durable path of a notification to a channel. */
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { sql } from 'drizzle-orm'

/** What to watch for, on which minions, and whom to tell. */
export const alertRules = sqliteTable('alert_rules', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  nameKey: text('name_key').notNull(),
  kind: text('kind').notNull(),
  minionGlob: text('minion_glob').notNull(),
  /** JSON object of the kind's parameters. */
  params: text('params').notNull(),
  /** JSON list of channel ids. */
  channelIds: text('channel_ids').notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
  renotifyMinutes: integer('renotify_minutes').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [uniqueIndex('alert_rules_name_key').on(t.nameKey)])

/** One alert per (rule, subject) while it fires; resolved ones stay as history. */
export const alerts = sqliteTable('alerts', {
  id: text('id').primaryKey(),
  ruleId: text('rule_id').notNull(),
  subject: text('subject').notNull(),
  state: text('state').notNull(),
  summary: text('summary').notNull(),
  count: integer('count').notNull(),
  firstSeenAt: integer('first_seen_at').notNull(),
  lastSeenAt: integer('last_seen_at').notNull(),
  resolvedAt: integer('resolved_at'),
  ackedBy: text('acked_by'),
  ackedAt: integer('acked_at'),
  /** JSON evidence: jid, function, counts, minutes offline. */
  details: text('details').notNull(),
  /** When a notification last went out for it (renotify counts from here). */
  notifiedAt: integer('notified_at'),
}, (t) => [
  // One open alert per (rule, subject).
  uniqueIndex('alerts_open').on(t.ruleId, t.subject).where(sql`state = 'firing'`),
  index('alerts_time').on(t.firstSeenAt, t.id),
  index('alerts_state_time').on(t.state, t.firstSeenAt, t.id),
])

/** Silences: matching alerts still fire and resolve, but send nothing until ends_at. */
export const alertSilences = sqliteTable('alert_silences', {
  id: text('id').primaryKey(),
  ruleId: text('rule_id'),
  subjectGlob: text('subject_glob').notNull(),
  endsAt: integer('ends_at').notNull(),
  comment: text('comment').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: integer('created_at').notNull(),
})

/** Where notifications go; secrets inside `config` are encrypted under secret.key. */
export const alertChannels = sqliteTable('alert_channels', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  type: text('type').notNull(),
  config: text('config').notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * The outbox: each alert transition (fired, resolved, renotify), written in the transaction that made it; the
 * grouper turns a rule's transitions of one group window into one notification.
 */
export const alertTransitions = sqliteTable('alert_transitions', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  ruleId: text('rule_id').notNull(),
  alertId: text('alert_id').notNull(),
  status: text('status').notNull(),
  at: integer('at').notNull(),
  /** The notification it went out in; null while waiting for its group window. */
  notificationId: text('notification_id'),
}, (t) => [index('alert_transitions_pending').on(t.notificationId, t.ruleId, t.at)])

/** One grouped message of a rule (stable id across retries), as sent to every channel of the rule. */
export const alertNotifications = sqliteTable('alert_notifications', {
  id: text('id').primaryKey(),
  ruleId: text('rule_id').notNull(),
  status: text('status').notNull(),
  /** The webhook body, as JSON. */
  body: text('body').notNull(),
  createdAt: integer('created_at').notNull(),
})

/** One notification to one channel: retried with backoff until sent or given up. */
export const alertDeliveries = sqliteTable('alert_deliveries', {
  id: text('id').primaryKey(),
  notificationId: text('notification_id').notNull(),
  channelId: text('channel_id').notNull(),
  status: text('status').notNull(),
  attempts: integer('attempts').notNull(),
  lastError: text('last_error'),
  nextAttemptAt: integer('next_attempt_at'),
  sentAt: integer('sent_at'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('alert_deliveries_due').on(t.status, t.nextAttemptAt), index('alert_deliveries_time').on(t.createdAt, t.id)])

/** Every delivery attempt and its outcome. */
export const alertAttempts = sqliteTable('alert_attempts', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  deliveryId: text('delivery_id').notNull(),
  at: integer('at').notNull(),
  ok: integer('ok', { mode: 'boolean' }).notNull(),
  detail: text('detail').notNull(),
}, (t) => [index('alert_attempts_delivery').on(t.deliveryId, t.id)])
