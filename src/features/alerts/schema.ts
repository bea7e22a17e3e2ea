/** The answer schemas of the alerts API (contract §11): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'
import { Nullable, OneOf } from '../../lib/schemas'
import { CHANNEL_TYPES } from './channels/types'

/** The rule kinds (contract §11). */
export const RULE_KINDS = ['run_failed', 'run_blocked', 'run_changed', 'minion_offline', 'key_pending', 'salt_unreachable', 'master_unreachable', 'vulnerable'] as const
/** The severities a `vulnerable` rule names as its least. */
export const MIN_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const
const Time = T.String({ format: 'date-time' })

/** A rule's parameters: its kind's defaults with what was given (each kind reads its own). */
export const RuleParamsOut = T.Object({ fun_glob: T.Optional(T.String()), for_minutes: T.Optional(T.Integer()), min_severity: T.Optional(OneOf(MIN_SEVERITIES)) })
/** One alert rule. */
export const RuleOut = T.Object({
  id: T.String({ format: 'uuid' }), name: T.String(), kind: OneOf(RULE_KINDS), minion_glob: T.String(), params: RuleParamsOut, channel_ids: T.Array(T.String({ format: 'uuid' })),
  enabled: T.Boolean(), renotify_minutes: T.Integer(), created_at: Time, updated_at: Time,
})
/** GET /api/alerts/rules: every rule, by name. */
export const RuleListOut = T.Object({ rules: T.Array(RuleOut) })
/** One alert of a rule about one subject, with its rule's name and kind and the evidence in `details`. */
export const AlertOut = T.Object({
  id: T.String({ format: 'uuid' }), rule_id: T.String({ format: 'uuid' }), rule_name: T.String(), kind: OneOf(RULE_KINDS), subject: T.String(), state: OneOf(['firing', 'resolved']),
  summary: T.String(), count: T.Integer(), first_seen_at: Time, last_seen_at: Time, resolved_at: Nullable(Time), acked_by: Nullable(T.String()), acked_at: Nullable(Time),
  details: T.Record(T.String(), T.Unknown()),
})
/** GET /api/alerts: newest first. */
export const AlertListOut = T.Object({ total: T.Integer(), alerts: T.Array(AlertOut) })
/** One silence: alerts of its rule (any rule when null) whose subject matches its glob are not notified until it ends. */
export const SilenceOut = T.Object({
  id: T.String({ format: 'uuid' }), rule_id: Nullable(T.String({ format: 'uuid' })), subject_glob: T.String(), ends_at: Time, comment: T.String(), created_by: T.String(), created_at: Time,
})
/** GET /api/alerts/silences. */
export const SilenceListOut = T.Object({ silences: T.Array(SilenceOut) })
/** One channel; secrets only as `*_set` flags, and the destination masked for a caller who may not manage alerts. */
export const ChannelOut = T.Object({
  id: T.String({ format: 'uuid' }), name: T.String(), type: OneOf(CHANNEL_TYPES), config: T.Record(T.String(), T.Unknown()), enabled: T.Boolean(), created_at: Time, updated_at: Time,
})
/** GET /api/alerts/channels. */
export const ChannelListOut = T.Object({ channels: T.Array(ChannelOut) })
/** POST /api/alerts/channels/{id}/test. */
export const ChannelTestOut = T.Object({ ok: T.Boolean(), detail: T.String() })
/** One delivery of a notification to a channel. */
export const DeliveryOut = T.Object({
  id: T.String({ format: 'uuid' }), notification_id: T.String({ format: 'uuid' }), channel_id: T.String({ format: 'uuid' }), status: OneOf(['pending', 'sent', 'failed']),
  attempts: T.Integer(), last_error: Nullable(T.String()), next_attempt_at: Nullable(Time), sent_at: Nullable(Time),
})
/** GET /api/alerts/deliveries: newest first. */
export const DeliveryListOut = T.Object({ total: T.Integer(), deliveries: T.Array(DeliveryOut) })
