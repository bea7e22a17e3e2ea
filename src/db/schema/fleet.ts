/** Minions, jobs, state runs and activity events. */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey, blob } from 'drizzle-orm/sqlite-core'
import { sql } from 'drizzle-orm'

/** What Saltdeck knows of one minion: key state, presence, grains summary, last run. */
export const minions = sqliteTable('minions', {
  id: text('id').primaryKey(),
  keyState: text('key_state'),
  /** The key's fingerprint as salt's wheel key.finger reports it; null until the keys poller has asked. */
  keyFingerprint: text('key_fingerprint'),
  online: integer('online', { mode: 'boolean' }).notNull().default(false),
  lastSeen: integer('last_seen'),
  /** When the minion was first seen missing (while the master answered); null while online. minion_offline counts from here. */
  offlineSince: integer('offline_since'),
  os: text('os'),
  osrelease: text('osrelease'),
  ip: text('ip'),
  saltVersion: text('salt_version'),
  osFamily: text('os_family'),
  grains: text('grains'),
  lastRunStatus: text('last_run_status'),
  lastRunCompletedAt: integer('last_run_completed_at'),
  /** Stored runs of this minion, kept by recordRun so the run list's total needs no count. */
  runCount: integer('run_count').notNull().default(0),
  updatedAt: integer('updated_at').notNull(),
  /**
   * The salt sources it has been seen through, their names in name order joined by commas (null: none yet). Kept from
   * minion_sources by minions/sources-store.ts, so a page of minions reads it with the row instead of one lookup each.
   */
  sources: text('sources'),
}, (t) => [index('minions_key_state').on(t.keyState, t.id), index('minions_key_last_status').on(t.keyState, t.lastRunStatus)])

/**
 * The salt sources a minion has been seen through (contract §15 "Several masters"): one row per (minion, source). A
 * minion of salt's multi-master answers to two masters and is one minion with both sources here.
 */
export const minionSources = sqliteTable('minion_sources', {
  minionId: text('minion_id').notNull(),
  source: text('source').notNull(),
  firstSeenAt: integer('first_seen_at').notNull(),
  lastSeenAt: integer('last_seen_at').notNull(),
}, (t) => [primaryKey({ columns: [t.minionId, t.source] }), index('minion_sources_source').on(t.source, t.minionId)])

/** The job index: one row per salt job seen on the stream or in the job cache. */
export const jobs = sqliteTable('jobs', {
  jid: text('jid').primaryKey(),
  fun: text('fun'),
  target: text('target'),
  tgtType: text('tgt_type'),
  user: text('user'),
  arg: text('arg'),
  minions: text('minions'),
  startedAt: integer('started_at').notNull(),
  /** The Saltdeck user who dispatched it (salt's `user` is then the salt-api account); null for jobs started elsewhere. */
  initiator: text('initiator'),
  /** A job Saltdeck ran for itself (grains, inventory, presence pings): hidden unless asked for. */
  internal: integer('internal', { mode: 'boolean' }).notNull().default(false),
  killedAt: integer('killed_at'),
  killedBy: text('killed_by'),
  /** The salt source (salt-api) the job was first seen through (contract §15 "Several masters"). */
  source: text('source').notNull().default('default'),
}, (t) => [index('jobs_started').on(t.startedAt, t.jid), index('jobs_fun').on(t.fun, t.startedAt), index('jobs_user').on(t.user, t.startedAt), index('jobs_source').on(t.source, t.startedAt)])

/** What Saltdeck knows of a job before salt reports it: who dispatched it, or that Saltdeck runs it for itself. */
export const jobMarks = sqliteTable('job_marks', {
  jid: text('jid').primaryKey(),
  initiator: text('initiator'),
  internal: integer('internal', { mode: 'boolean' }).notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('job_marks_created').on(t.createdAt)])

/** One minion's return of a job; the return value is kept as bounded JSON text. */
export const jobReturns = sqliteTable('job_returns', {
  jid: text('jid').notNull(),
  minionId: text('minion_id').notNull(),
  success: integer('success', { mode: 'boolean' }),
  retcode: integer('retcode'),
  ret: text('ret'),
  receivedAt: integer('received_at').notNull(),
}, (t) => [primaryKey({ columns: [t.jid, t.minionId] })])

/** One minion's return of a state function, stored once per (minion, jid). */
export const runs = sqliteTable('runs', {
  id: text('id').primaryKey(),
  minionId: text('minion_id').notNull(),
  jid: text('jid').notNull(),
  fun: text('fun').notNull(),
  completedAt: integer('completed_at').notNull(),
  passCount: integer('pass_count').notNull(),
  failCount: integer('fail_count').notNull(),
  changeCount: integer('change_count').notNull(),
  totalCount: integer('total_count').notNull(),
  durationMs: integer('duration_ms').notNull(),
  blocked: integer('blocked', { mode: 'boolean' }).notNull(),
  status: text('status').notNull(),
  /** A dry run (test=True): never a minion's last run, never in fleet counts. */
  test: integer('test', { mode: 'boolean' }).notNull().default(false),
  /** The state files the run applied (JSON list, from each state's __sls__). */
  sls: text('sls').notNull().default('[]'),
  /** The salt source the run's return came through. */
  source: text('source').notNull().default('default'),
}, (t) => [
  uniqueIndex('runs_minion_jid').on(t.minionId, t.jid),
  // Covering: a minion's newest runs are read from the index alone, not from ~20 scattered table pages.
  index('runs_minion_time_cover').on(t.minionId, t.completedAt, t.jid, t.id, t.fun, t.passCount, t.failCount, t.changeCount, t.totalCount, t.durationMs, t.blocked, t.status, t.test, t.sls, t.source),
  index('runs_minion_status_time').on(t.minionId, t.status, t.completedAt, t.jid),
])

/** The activity feed; ts in epoch ms.  */
export const activityEvents = sqliteTable('activity_events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  ts: integer('ts').notNull(),
  category: text('category').notNull(),
  eventType: text('event_type').notNull(),
  minionId: text('minion_id'),
  jid: text('jid'),
  fun: text('fun'),
  success: integer('success', { mode: 'boolean' }),
  changed: integer('changed', { mode: 'boolean' }),
  initiator: text('initiator'),
  target: text('target'),
  durationMs: integer('duration_ms'),
  summary: text('summary').notNull(),
  /** The salt source the event came through (Saltdeck's own key actions: the source holding the key). */
  source: text('source').notNull().default('default'),
}, (t) => [
  index('activity_ts').on(t.ts, t.id),
  index('activity_category_ts').on(t.category, t.ts, t.id),
  index('activity_minion_ts').on(t.minionId, t.ts, t.id),
  index('activity_jid').on(t.jid),
  // hide_routine's newest page: only the events it keeps (a routine job return is most of a busy feed).
  index('activity_notable_ts').on(t.ts, t.id).where(sql`NOT (event_type = 'job.ret' AND coalesce(success, 0) = 1 AND coalesce(changed, 0) = 0)`),
])

/** Events per category, kept current on insert and prune so unfiltered totals need no count(*). */
export const activityCounts = sqliteTable('activity_counts', {
  category: text('category').primaryKey(),
  n: integer('n').notNull(),
})

/** A state's identity, stored once however many runs have it: salt's state key and its sls. */
export const stateIdents = sqliteTable('state_idents', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  key: text('key').notNull(),
  sls: text('sls').notNull(),
  stateId: text('state_id').notNull(),
  function: text('function').notNull(),
  name: text('name').notNull(),
}, (t) => [uniqueIndex('state_idents_key_sls').on(t.key, t.sls)])

/** State comments, stored once each (most repeat run after run). */
export const stateTexts = sqliteTable('state_texts', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  text: text('text').notNull(),
}, (t) => [uniqueIndex('state_texts_text').on(t.text)])

/** A run's per-state detail, kept for the newest SALTDECK_RUN_DETAIL_KEEP runs of each minion. */
export const runDetails = sqliteTable('run_details', {
  runId: text('run_id').primaryKey(),
  minionId: text('minion_id').notNull(),
  /** Packed states in run order: per state four little-endian u32 (identity, comment, duration ms, flags). */
  states: blob('states'),
  /** JSON object: run order → the state's changes, for the states that changed something. */
  changes: text('changes'),
  /** JSON list of render or compile errors, when the run returned those instead of states. */
  errors: text('errors'),
}, (t) => [index('run_details_minion').on(t.minionId)])

/** Fleet health per UTC day: minions by the status of their last real run as it stood at the end of that day. */
export const runTrend = sqliteTable('run_trend', {
  day: text('day').primaryKey(),
  healthy: integer('healthy').notNull(),
  changed: integer('changed').notNull(),
  unhealthy: integer('unhealthy').notNull(),
  blocked: integer('blocked').notNull(),
})

/** States failing now: one row per (state, minion) whose last real run failed it, until a later run passes it. */
export const stateFailures = sqliteTable('state_failures', {
  identId: integer('ident_id').notNull(),
  minionId: text('minion_id').notNull(),
  failedAt: integer('failed_at').notNull(),
  commentId: integer('comment_id'),
}, (t) => [primaryKey({ columns: [t.identId, t.minionId] }), index('state_failures_time').on(t.failedAt)])
