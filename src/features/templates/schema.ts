/** The answer schemas of the template and schedule routes: schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'
import { Nullable } from '../../lib/schemas'
import { SkippedSourceOut } from '../salt-actions/schema'

/** A template as answered. */
export const TemplateOut = T.Object({
  id: T.String({ format: 'uuid' }), name: T.String(), description: T.String(), tgt: T.String(), tgt_type: T.String(), fun: T.String(),
  arg: T.Array(T.Unknown()), kwarg: T.Record(T.String(), T.Unknown()), batch: Nullable(T.String()), shared: T.Boolean(),
  owner: Nullable(T.String({ description: 'the owner\'s username; null once that user is deleted' })), created_at: T.String({ format: 'date-time' }), updated_at: T.String({ format: 'date-time' }),
})
/** GET /api/templates. */
export const TemplateListOut = T.Object({ templates: T.Array(TemplateOut) })
/** POST /api/templates/{id}/run: the job started (and its batch, when the template runs in batches). */
export const TemplateRunOut = T.Object({ jid: T.String(), minions: T.Array(T.String()), batch_id: T.Optional(T.String()), skipped_sources: T.Array(SkippedSourceOut) })

/** A schedule as answered. */
export const ScheduleOut = T.Object({
  id: T.String({ format: 'uuid' }), name: T.String(), template_id: T.String({ format: 'uuid' }), template_name: Nullable(T.String()), cron: T.String(), timezone: T.String(),
  enabled: T.Boolean(), next_run_at: Nullable(T.String({ format: 'date-time' })), last_run_at: Nullable(T.String({ format: 'date-time' })), last_jid: Nullable(T.String()),
  last_error: Nullable(T.String()), created_by: Nullable(T.String({ description: 'the creator\'s username, whose permissions it fires with' })),
  created_at: T.String({ format: 'date-time' }), updated_at: T.String({ format: 'date-time' }),
})
/** GET /api/schedules. */
export const ScheduleListOut = T.Object({ schedules: T.Array(ScheduleOut) })
