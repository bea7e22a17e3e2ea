/** Batched runs (contract §16): a checked minion list published in slices, one after the other. */
import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core'

/** One batched run: what it runs, how it slices, and where it stands. */
export const batches = sqliteTable('batches', {
  id: text('id').primaryKey(),
  initiator: text('initiator').notNull(),
  fun: text('fun').notNull(),
  /** JSON arrays/objects as POST /api/run took them. */
  arg: text('arg').notNull(),
  kwarg: text('kwarg').notNull(),
  /** The target as asked (salt expanded and checked it once, at the start). */
  target: text('target').notNull(),
  tgtType: text('tgt_type').notNull(),
  size: integer('size').notNull(),
  waitSeconds: integer('wait_seconds').notNull(),
  stopOnFailure: integer('stop_on_failure', { mode: 'boolean' }).notNull(),
  /** running | done | stopped | failed */
  state: text('state').notNull(),
  error: text('error'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('batches_state').on(t.state)])

/** One slice of a batch: its minions, and its job once published. */
export const batchSlices = sqliteTable('batch_slices', {
  batchId: text('batch_id').notNull(),
  idx: integer('idx').notNull(),
  /** JSON array of minion ids. */
  minions: text('minions').notNull(),
  jid: text('jid'),
  startedAt: integer('started_at'),
  finishedAt: integer('finished_at'),
}, (t) => [primaryKey({ columns: [t.batchId, t.idx] })])
