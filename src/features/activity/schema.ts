/** The answer schemas of the activity list (contract §6): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'
import { Nullable } from '../../lib/schemas'

/** The activity event record. */
export const EventOut = T.Object({
  id: T.Integer(), ts: T.String({ format: 'date-time' }), category: T.String(), event_type: T.String(), minion_id: Nullable(T.String()),
  jid: Nullable(T.String()), fun: Nullable(T.String()), success: Nullable(T.Boolean()), changed: Nullable(T.Boolean()), initiator: Nullable(T.String()),
  target: Nullable(T.String()), duration_ms: Nullable(T.Integer()), summary: T.String(),
  /** The salt source the event came through (contract §15 "Several masters"). */
  source: T.String(),
})
/** GET /api/activity. */
export const EventListOut = T.Object({ total: T.Integer(), events: T.Array(EventOut) })
