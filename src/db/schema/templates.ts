/** Job templates and their schedules (contract §16), and the once-per-firing claims of schedules. */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from 'drizzle-orm/sqlite-core'

/** A saved command: private to its owner, or shared with every user. */
export const jobTemplates = sqliteTable('job_templates', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** lower(name): names are unique case-insensitively. */
  nameKey: text('name_key').notNull(),
  description: text('description').notNull(),
  tgt: text('tgt').notNull(),
  tgtType: text('tgt_type').notNull(),
  fun: text('fun').notNull(),
  /** JSON list of positional arguments. */
  arg: text('arg').notNull(),
  /** JSON object of keyword arguments. */
  kwarg: text('kwarg').notNull(),
  /** A count or a percentage (`10%`), or null for all at once. */
  batch: text('batch'),
  shared: integer('shared', { mode: 'boolean' }).notNull(),
  ownerId: text('owner_id').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [uniqueIndex('job_templates_name_key').on(t.nameKey), index('job_templates_owner').on(t.ownerId)])

/** A template run on a cron in a time zone, as the user who created it. */
export const schedules = sqliteTable('schedules', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  nameKey: text('name_key').notNull(),
  templateId: text('template_id').notNull(),
  cron: text('cron').notNull(),
  timezone: text('timezone').notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
  /** The next firing, epoch ms; null while disabled. */
  nextRunAt: integer('next_run_at'),
  lastRunAt: integer('last_run_at'),
  lastJid: text('last_jid'),
  lastError: text('last_error'),
  createdBy: text('created_by').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [uniqueIndex('schedules_name_key').on(t.nameKey), index('schedules_due').on(t.enabled, t.nextRunAt), index('schedules_template').on(t.templateId)])

/** One row per firing, inserted before anything is published: whichever instance inserts it fires, the others see it taken. */
export const scheduleFirings = sqliteTable('schedule_firings', {
  scheduleId: text('schedule_id').notNull(),
  dueAt: integer('due_at').notNull(),
  claimedAt: integer('claimed_at').notNull(),
}, (t) => [primaryKey({ columns: [t.scheduleId, t.dueAt] })])
