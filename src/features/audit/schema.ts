/** The answer schema of the audit log read (contract §4, §9): schema-only, so the dashboard derives its types from it. */
import { Type as T } from '@sinclair/typebox'
import { Nullable } from '../../lib/schemas'

/** One audit entry: who (null when no user is known, e.g. an anonymous failure), what, on what, whether it worked, from where. */
export const AuditEntryOut = T.Object({
  id: T.Integer(), ts: T.String({ format: 'date-time' }), username: Nullable(T.String()), action: T.String(), target: Nullable(T.String()), ok: T.Boolean(),
  detail: Nullable(T.String()), client: Nullable(T.String()),
})
/** GET /api/audit: newest first, with the total before paging. */
export const AuditListOut = T.Object({ total: T.Integer(), entries: T.Array(AuditEntryOut) })
