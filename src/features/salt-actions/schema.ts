/** The answer schemas of the salt actions (the connection tests, the run scope and preview): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'

/** The answer of both salt-api connection tests. */
export const SaltTestOut = T.Object({ ok: T.Boolean(), detail: T.String(), minion_count: T.Union([T.Integer(), T.Null()]) })
/** One execute grant: the functions (`salt:<glob>`) and the minions (salt's glob on ids) it allows. */
export const RunGrantOut = T.Object({ resource_glob: T.String(), target_glob: T.String() })
/** GET /api/run/scope. */
export const RunScopeOut = T.Object({ grants: T.Array(RunGrantOut) })
/** POST /api/run/preview: the minions salt matches (the first 1,000), those outside the caller's grants, and whether fun is allowed. */
export const RunPreviewOut = T.Object({
  count: T.Integer({ minimum: 0 }),
  minions: T.Array(T.String()),
  outside_scope: T.Array(T.String()),
  functions_allowed: T.Union([T.Boolean(), T.Null()]),
})
/** A salt source a job did not go through, and why (contract §15 "Several masters": the job runs on the sources that are up). */
export const SkippedSourceOut = T.Object({ source: T.String(), reason: T.String() })
const Skipped = T.Array(SkippedSourceOut, { description: 'the salt sources that could not take it (error, no answer in time, not configured); empty with one source' })
/** POST /api/run (202): the job salt published and the minions it went to; a batch's first slice, with the batch's id. */
export const RunOut = T.Object({ jid: T.String(), minions: T.Array(T.String()), batch_id: T.Optional(T.String({ format: 'uuid' })), skipped_sources: Skipped })
/** POST /api/jobs/{jid}/kill (202): the killed job, the kill job (null when salt published none) and the minions it went to. */
export const KillOut = T.Object({ jid: T.String(), kill_jid: T.Union([T.String(), T.Null()]), minions: T.Array(T.String()), skipped_sources: Skipped })
/** One poller's state. */
export const PollerStatusOut = T.Object({
  name: T.String(), enabled: T.Boolean(), interval_seconds: T.Integer(), running: T.Boolean(), last_started_at: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  last_duration_ms: T.Union([T.Integer(), T.Null()]), last_error: T.Union([T.String(), T.Null()]), runs: T.Integer(), errors: T.Integer(),
  items_processed: T.Union([T.Integer(), T.Null()]), next_run_at: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  waiting_for_master: T.Boolean({ description: 'its last tick was skipped because the salt-master does not answer; it runs once the master does' }),
})
/** The event stream's state. */
export const StreamStatusOut = T.Object({
  enabled: T.Boolean(), connected: T.Boolean(), events_ingested: T.Integer(), frames_skipped: T.Integer(), reconnects: T.Integer(), last_error: T.Union([T.String(), T.Null()]),
})
/** GET /api/admin/pollers. */
export const PollersOut = T.Object({ pollers: T.Array(PollerStatusOut), event_stream: StreamStatusOut })
/** POST /api/admin/pollers/{name}/run (202). */
export const PollerRunOut = T.Object({ name: T.String(), started: T.Literal(true) })
