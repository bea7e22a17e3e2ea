/** The answer schemas of the job reads and the key list (contract §7): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'
import { Nullable } from '../../lib/schemas'

const Str = Nullable(T.String())
const Time = Nullable(T.String({ format: 'date-time' }))

/** A job record: `arg` as salt published it, and its positional and keyword arguments apart. */
export const JobOut = T.Object({
  jid: T.String(), fun: Str, target: Str, tgt_type: Str, user: Str, initiator: Str, internal: T.Boolean(), started_at: T.String({ format: 'date-time' }),
  arg: T.Unknown({ description: "The arguments as salt published them: one list, keyword arguments inside it as an object with `__kwarg__: true` (null when salt did not say)" }),
  arguments: Nullable(T.Array(T.Unknown(), { description: 'Positional arguments: `arg` without its keyword objects' })),
  kwargs: Nullable(T.Record(T.String(), T.Unknown(), { description: 'Keyword arguments: the `__kwarg__` objects of `arg` merged, without the marker' })),
  minions: Nullable(T.Array(T.String())), returned: T.Integer(), failed: T.Integer(), sls: T.Array(T.String()),
  killed_at: Time, killed_by: Str, running: T.Boolean(),
  status: T.Union([T.Literal('running'), T.Literal('finished'), T.Literal('killed')], {
    description: '`killed` once killed through Saltdeck (whatever returned after), else `running` while returns are waited for, else `finished`',
  }),
  /** The salt source (master) the job was first seen through (contract §15 "Several masters"). */
  source: T.String(),
})
/** GET /api/jobs. */
export const JobListOut = T.Object({ total: T.Integer(), jobs: T.Array(JobOut) })
/** GET /api/jobs/{jid}: the job with its per-minion returns and, for a runner job, its child jobs. */
export const JobDetailOut = T.Composite([JobOut, T.Object({
  returns: T.Array(T.Object({ minion_id: T.String(), success: Nullable(T.Boolean()), retcode: Nullable(T.Integer()), return: T.Unknown(), received_at: T.String({ format: 'date-time' }) })),
  children: T.Array(T.Object({
    jid: T.String(), step: Str, job: Nullable(JobOut),
  }), { description: "A runner job's child jobs (an orchestration's steps, named by `__jid__` in its return) with their records once indexed; empty for other jobs" }),
})])
/** GET /api/keys. */
export const KeyListsOut = T.Object({
  accepted: T.Array(T.String()), pending: T.Array(T.String()), rejected: T.Array(T.String()), denied: T.Array(T.String()),
  fingerprints: T.Record(T.String(), T.String(), { description: 'Key fingerprint by minion id (wheel key.finger), for the keys the keys poller has read one of' }),
  sources: T.Record(T.String(), T.Array(T.String()), { description: 'The salt sources each listed key was seen through, by name (empty: none yet)' }),
})
