/** The answer schemas of the minion routes (contract §7): schema-only, so the dashboard derives its types from them without server code. */
import { Type as T } from '@sinclair/typebox'
import { Nullable, OneOf } from '../../lib/schemas'
import { RUN_STATUSES } from '../../salt/returns'

/** The Minion run record. */
export const RunOut = T.Object({
  id: T.String({ format: 'uuid' }), jid: T.String(), fun: T.String(), completed_at: T.String({ format: 'date-time' }), pass_count: T.Integer(),
  fail_count: T.Integer(), change_count: T.Integer(), total_count: T.Integer(), duration_ms: T.Integer(), blocked: T.Boolean(), status: OneOf(RUN_STATUSES),
  /** A dry run (test=True): never the minion's last run. */
  test: T.Boolean(),
  /** The state files the run applied. */
  sls: T.Array(T.String()),
  /** The salt source (master) its return came through (contract §15 "Several masters"). */
  source: T.String(),
})

/** One state of a run, in Salt's order. */
export const StateOut = T.Object({
  key: T.String(), id: T.String(), sls: T.String(), function: T.String(), name: T.String(), result: Nullable(T.Boolean()), changed: T.Boolean(),
  comment: T.String(), changes: T.Record(T.String(), T.Unknown()), duration_ms: T.Integer(), order: T.Integer(),
})
/** A state's outcome in one run of a diff (null where the state did not run). */
export const OutcomeOut = Nullable(T.Object({ result: Nullable(T.Boolean()), changed: T.Boolean() }))
/** A run as a diff names it: the run record and whether its states were pruned. */
const RunRef = T.Object({ ...RunOut.properties, detail_pruned: T.Boolean() })

/** One row of the minion list. */
export const MinionSummaryOut = T.Object({
  id: T.String(), key_state: Nullable(T.String()), online: T.Boolean(),
  /** `online`/`offline` as last known, or `unknown` while salt-api does not answer. */
  presence: OneOf(['online', 'offline', 'unknown'] as const), last_seen: Nullable(T.String({ format: 'date-time' })), os: Nullable(T.String()),
  osrelease: Nullable(T.String()), ip: Nullable(T.String()), salt_version: Nullable(T.String()),
  last_run: Nullable(T.Object({ status: T.String(), completed_at: T.String({ format: 'date-time' }) })),
  /** The salt sources (masters) the minion has been seen through, by name (contract §15 "Several masters"). */
  sources: T.Array(T.String()),
})
/** GET /api/minions. */
export const MinionListOut = T.Object({ total: T.Integer(), minions: T.Array(MinionSummaryOut) })
/** GET /api/minions/{id}: the list row with the key's fingerprint and the grains. */
export const MinionDetailOut = T.Object({
  ...MinionSummaryOut.properties,
  key_fingerprint: Nullable(T.String({ description: "The key's fingerprint as salt's wheel key.finger reports it; null until the keys poller has read it" })),
  grains: T.Record(T.String(), T.Unknown()),
})
/** GET /api/minions/{id}/runs. */
export const RunListOut = T.Object({ minion_id: T.String(), total: T.Integer(), runs: T.Array(RunOut) })
/** GET /api/minions/{id}/runs/{jid}: the run with its states, or its render errors, or neither when pruned. */
export const RunDetailOut = T.Object({ ...RunOut.properties, minion_id: T.String(), states: Nullable(T.Array(StateOut)), errors: Nullable(T.Array(T.String())), detail_pruned: T.Boolean() })
/** GET /api/minions/{id}/runs/{jid}/diff. */
export const RunDiffOut = T.Object({ from: RunRef, to: RunRef, states: T.Array(T.Object({ key: T.String(), id: T.String(), sls: T.String(), before: OutcomeOut, after: OutcomeOut })) })
