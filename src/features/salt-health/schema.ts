/** The answer schema of GET /api/salt/health: schema-only, so the dashboard derives its type from it. */
import { Type as T } from '@sinclair/typebox'
import { Nullable, OneOf } from '../../lib/schemas'

const Time = Nullable(T.String({ format: 'date-time' }))

/**
 * The Saltdeck instance leading a salt source (contract §15): `here` this one; otherwise the event stream and pollers
 * shown are that instance's, as of `reported_at` (its last heartbeat, every 5 s). Null: no instance leads it now. Its
 * id and hostname only for holders of view setting:* (who may list the instances), else null.
 */
const Leader = Nullable(T.Object({ instance_id: Nullable(T.String()), hostname: Nullable(T.String()), here: T.Boolean(), reported_at: Time }))

/** The health document. */
export const HealthOut = T.Object({
  configured: T.Boolean(),
  salt_api: T.Object({ reachable: Nullable(T.Boolean()), since: Time, error: Nullable(T.String()) }),
  presence_known: T.Boolean(),
  /** Who leads the `default` source. */
  leader: Leader,
  database: T.Object({ writable: T.Boolean(), since: Time, error: Nullable(T.String()) }),
  master: T.Object({
    version: Nullable(T.String()), reachable: Nullable(T.Boolean()), since: Time, error: Nullable(T.String()),
    presence_hold: Nullable(OneOf(['down', 'grace'] as const)), grace_until: Time, check_interval_seconds: T.Integer(),
  }),
  minion_versions: T.Array(T.Object({ version: Nullable(T.String()), minions: T.Integer() })),
  event_stream: T.Object({
    state: OneOf(['connected', 'reconnecting', 'broken', 'disabled'] as const), since: T.String({ format: 'date-time' }), last_event_at: Time,
    reconnects_last_hour: T.Integer(), last_error: Nullable(T.String()), polling_covers: T.Boolean(), catch_up_interval_seconds: T.Integer(),
  }),
  pollers: T.Array(T.Object({
    name: T.String(), interval_seconds: T.Integer(), last_success_at: Time, lag_seconds: Nullable(T.Integer()), last_error: Nullable(T.String()), late: T.Boolean(),
  })),
  /** Every salt source's own state (contract §15 "Several masters"), `default` first: the fields above are `default`'s. */
  sources: T.Array(T.Object({
    name: T.String(), configured: T.Boolean(), presence_known: T.Boolean(), leader: Leader,
    salt_api: T.Object({ reachable: Nullable(T.Boolean()), since: Time, error: Nullable(T.String()) }),
    master: T.Object({ version: Nullable(T.String()), reachable: Nullable(T.Boolean()), since: Time, error: Nullable(T.String()) }),
    event_stream: T.Object({ state: OneOf(['connected', 'reconnecting', 'broken', 'disabled'] as const), since: T.String({ format: 'date-time' }), last_error: Nullable(T.String()) }),
    pollers: T.Array(T.Object({ name: T.String(), interval_seconds: T.Integer(), last_success_at: Time, last_error: Nullable(T.String()) })),
  })),
  known_faults: T.Array(T.Object({ id: T.String(), versions: T.String(), issue: T.String(), summary: T.String(), handling: T.String() })),
  problems: T.Array(T.String()),
})
