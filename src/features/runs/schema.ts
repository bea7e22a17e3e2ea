/** The answer schemas of the fleet health routes (contract §13): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'

/** Minions by their last real run's status (the summary, and each trend point). */
export const StatusCountsOut = T.Object({ healthy: T.Integer(), changed: T.Integer(), unhealthy: T.Integer(), blocked: T.Integer(), never: T.Integer() })
/** GET /api/runs/summary. */
export const RunSummaryOut = T.Object({ minions: T.Integer(), by_status: StatusCountsOut })
/** GET /api/runs/trend: one point per UTC day. */
export const TrendOut = T.Object({ days: T.Integer(), points: T.Array(T.Object({ day: T.String({ format: 'date' }), ...StatusCountsOut.properties })) })
/** One state failing now, on how many minions. */
export const FailingStateOut = T.Object({ id: T.String(), sls: T.String(), function: T.String(), minion_count: T.Integer(), last_failed_at: T.String({ format: 'date-time' }), sample_comment: T.String() })
/** GET /api/runs/failing-states. */
export const FailingStatesOut = T.Object({ items: T.Array(FailingStateOut) })
