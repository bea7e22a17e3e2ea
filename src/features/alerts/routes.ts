/** The alerts API (contract §11): rules, alerts, silences, channels and deliveries; every write audited. */
import { Type as T, type TSchema } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, Nullable, OneOf, PlainText, paging } from '../../http/schemas'
import { checkPart } from '../../http/validation'
import { ValidationFailed, valueErrorEntry } from '../../http/errors'
import { allowedDestination, allowedUrl } from '../../http/destination'
import { CHANNEL_TYPES, channelForSend, createChannel, deleteChannel, getChannel, listChannels, updateChannel, type ChannelType } from './channel-store'
import {
  FLEET_KINDS, RULE_KINDS, type RuleKind, ackAlert, createRule, createSilence, deleteRule, deleteSilence, getAlert, getRule, listAlerts, listDeliveries, listRules, listSilences, updateRule,
} from './service'
import { testSend } from './send'
import { CHANNELS } from './channels/registry'
import { holds, type Grant } from '../roles/service'
import { AlertListOut, AlertOut, ChannelListOut, ChannelOut, ChannelTestOut, DeliveryListOut, MIN_SEVERITIES, RuleListOut, RuleOut, SilenceListOut, SilenceOut } from './schema'

const view = { verb: 'view', resource: 'alert:*' }
const manage = { verb: 'manage', resource: 'alert:*' }
/** Whether the caller sees channel destinations whole: who may change a channel may read it. */
const mayManage = (grants: Grant[]) => holds(grants, manage.verb, manage.resource)
const Id = T.Object({ id: T.String({ format: 'uuid' }) })
const Glob = T.String({ minLength: 1, maxLength: 255 })
const Params = T.Object({
  fun_glob: T.Optional(Glob), for_minutes: T.Optional(T.Integer({ minimum: 1, maximum: 10080 })), min_severity: T.Optional(OneOf(MIN_SEVERITIES)),
}, { additionalProperties: false })
const RuleFields = {
  name: PlainText(1, 128, true), minion_glob: Glob, params: Params, channel_ids: T.Array(T.String({ format: 'uuid' }), { maxItems: 50 }),
  enabled: T.Boolean(), renotify_minutes: T.Integer({ minimum: 0, maximum: 10080 }),
}
/**
 * A channel config checked against its type's schema (the registry's), as a 422 on body.config when it does not fit,
 * then the type's own rule, and its destination against the outbound check (a 422 on body.config.url or .host).
 */
async function configOf(type: ChannelType, config: unknown, allow: string | null) {
  const kind = CHANNELS[type]
  const r = checkPart('body', T.Object({ config: kind.config }), { config })
  if (r.errors.length) throw new ValidationFailed(r.errors)
  const c = (r.value as { config: Record<string, unknown> }).config
  if ('check' in kind) kind.check(c)
  const d = kind.destination(c)
  if ('url' in d) await allowedUrl(d.url, allow, ['body', 'config', 'url'])
  else await allowedDestination(d.host, allow, ['body', 'config', 'host'], c.host)
  return c
}
const ZONED = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/i
/** A date and time with its zone (RFC 3339), as epoch ms; a 422 value_error on body.ends_at otherwise. */
function zonedTime(s: string): number {
  const t = ZONED.test(s) ? Date.parse(s.replace(' ', 'T')) : NaN
  if (Number.isFinite(t)) return t
  throw new ValidationFailed([valueErrorEntry(['body', 'ends_at'], 'ends_at must be a date and time with its zone, e.g. 2030-01-01T00:00:00Z', s)])
}

/** salt_unreachable and master_unreachable count minutes up to a day. */
function checkParams(kind: string, params: { for_minutes?: number } | undefined, minionGlob?: string) {
  if ((kind === 'salt_unreachable' || kind === 'master_unreachable') && (params?.for_minutes ?? 0) > 1440)
    throw new ValidationFailed([{ type: 'less_than_equal', loc: ['body', 'params', 'for_minutes'], msg: 'Input should be less than or equal to 1440', input: params!.for_minutes, ctx: { le: 1440 } }])
  // A fleet-wide kind has no minion to match: a glob other than "*" would only suggest it filters something.
  if (FLEET_KINDS.includes(kind as RuleKind) && minionGlob !== undefined && minionGlob !== '*')
    throw new ValidationFailed([valueErrorEntry(['body', 'minion_glob'], `${kind} is about the whole fleet and takes no minion glob`, minionGlob)])
}

export const alertRoutes = [
  route({ method: 'GET', path: '/api/alerts/rules', tag: 'alerts', summary: 'Alert rules', access: view, response: RuleListOut, handler: ({ deps }) => listRules(deps) }),
  route({
    method: 'POST', path: '/api/alerts/rules', tag: 'alerts', summary: 'Create an alert rule', access: manage, status: 201, errors: [409], response: RuleOut,
    body: T.Object({
      name: RuleFields.name, kind: OneOf(RULE_KINDS), minion_glob: Default(Glob, '*'), params: Default(Params, {}), channel_ids: Default(RuleFields.channel_ids, []),
      enabled: Default(T.Boolean(), true), renotify_minutes: Default(RuleFields.renotify_minutes, 0),
    }, { additionalProperties: false }),
    handler: ({ deps, body }) => (checkParams(body.kind, body.params, body.minion_glob), createRule(deps, body)),
    audit: { action: 'alert_rule.create', target: (_, r) => r.id, detail: (c) => c.body.name },
  }),
  route({ method: 'GET', path: '/api/alerts/rules/:id', tag: 'alerts', summary: 'One alert rule', access: view, params: Id, errors: [404], response: RuleOut, handler: ({ deps, params }) => getRule(deps, params.id) }),
  route({
    method: 'PATCH', path: '/api/alerts/rules/:id', tag: 'alerts', summary: 'Change an alert rule', access: manage, params: Id, errors: [404, 409], response: RuleOut,
    // As every PATCH here: null leaves a field alone.
    body: T.Object(Object.fromEntries(Object.entries(RuleFields).map(([k, s]) => [k, T.Optional(Nullable(s))])), { additionalProperties: false }) as TSchema,
    handler: async ({ deps, params, body }) => {
      const b = Object.fromEntries(Object.entries(body as object).filter(([, v]) => v !== null)) as Parameters<typeof updateRule>[2]
      checkParams((await getRule(deps, params.id)).kind, b.params, b.minion_glob)
      return updateRule(deps, params.id, b)
    },
    audit: { action: 'alert_rule.update', target: (c) => c.params.id },
  }),
  route({
    method: 'DELETE', path: '/api/alerts/rules/:id', tag: 'alerts', summary: 'Delete an alert rule and its alerts', access: manage, params: Id, status: 204, errors: [404],
    handler: ({ deps, params }) => deleteRule(deps, params.id),
    audit: { action: 'alert_rule.delete', target: (c) => c.params.id },
  }),
  route({
    method: 'GET', path: '/api/alerts', tag: 'alerts', summary: 'Alerts, newest first', access: view, response: AlertListOut,
    query: T.Object({ state: Default(OneOf(['firing', 'resolved', 'all'] as const), 'firing'), rule_id: T.Optional(T.String({ format: 'uuid' })), subject: T.Optional(T.String({ maxLength: 255 })), ...paging(500, 100) }),
    handler: ({ deps, query }) => listAlerts(deps, query),
  }),
  route({ method: 'GET', path: '/api/alerts/silences', tag: 'alerts', summary: 'Silences', access: view, response: SilenceListOut, handler: ({ deps }) => listSilences(deps) }),
  route({
    method: 'POST', path: '/api/alerts/silences', tag: 'alerts', summary: 'Silence matching alerts until a time', access: manage, status: 201, errors: [404], response: SilenceOut,
    body: T.Object({ rule_id: Default(Nullable(T.String({ format: 'uuid' })), null), subject_glob: Default(Glob, '*'), ends_at: T.String({ minLength: 1, maxLength: 64 }), comment: Default(PlainText(0, 500), '') }, { additionalProperties: false }),
    handler: ({ deps, body, principal }) => createSilence(deps, principal.username, { ...body, ends_at: zonedTime(body.ends_at) }),
    audit: { action: 'alert_silence.create', target: (_, r) => r.id },
  }),
  route({
    method: 'DELETE', path: '/api/alerts/silences/:id', tag: 'alerts', summary: 'End a silence', access: manage, params: Id, status: 204, errors: [404],
    handler: ({ deps, params }) => deleteSilence(deps, params.id),
    audit: { action: 'alert_silence.delete', target: (c) => c.params.id },
  }),
  route({ method: 'GET', path: '/api/alerts/channels', tag: 'alerts', summary: 'Channels (secrets never shown; destinations masked without manage alert:*)', access: view, response: ChannelListOut, handler: ({ deps, principal }) => listChannels(deps, mayManage(principal.grants)) }),
  route({
    method: 'POST', path: '/api/alerts/channels', tag: 'alerts', summary: 'Create a channel', access: manage, status: 201, response: ChannelOut,
    body: T.Object({ name: PlainText(1, 128, true), type: OneOf(CHANNEL_TYPES), config: T.Record(T.String(), T.Unknown()), enabled: Default(T.Boolean(), true) }, { additionalProperties: false }),
    handler: async ({ deps, body }) => createChannel(deps, { ...body, config: await configOf(body.type, body.config, deps.config.outboundAllow) }),
    audit: { action: 'alert_channel.create', target: (_, r) => r.id, detail: (c) => `${c.body.type} ${c.body.name}` },
  }),
  route({ method: 'GET', path: '/api/alerts/channels/:id', tag: 'alerts', summary: 'One channel (destination masked without manage alert:*)', access: view, params: Id, errors: [404], response: ChannelOut, handler: ({ deps, params, principal }) => getChannel(deps, params.id, mayManage(principal.grants)) }),
  route({
    method: 'PATCH', path: '/api/alerts/channels/:id', tag: 'alerts', summary: 'Change a channel (secrets left out are kept while the destination stays)', access: manage, params: Id, errors: [404], response: ChannelOut,
    body: T.Object({ name: T.Optional(PlainText(1, 128, true)), config: T.Optional(T.Record(T.String(), T.Unknown())), enabled: T.Optional(T.Boolean()) }, { additionalProperties: false }),
    handler: async ({ deps, params, body }) =>
      updateChannel(deps, params.id, { ...body, config: body.config ? await configOf((await getChannel(deps, params.id)).type, body.config, deps.config.outboundAllow) : undefined }),
    audit: { action: 'alert_channel.update', target: (c) => c.params.id },
  }),
  route({
    method: 'DELETE', path: '/api/alerts/channels/:id', tag: 'alerts', summary: 'Delete a channel no rule uses', access: manage, params: Id, status: 204, errors: [404, 409],
    handler: ({ deps, params }) => deleteChannel(deps, params.id),
    audit: { action: 'alert_channel.delete', target: (c) => c.params.id },
  }),
  route({
    method: 'POST', path: '/api/alerts/channels/:id/test', tag: 'alerts', summary: 'Send a test message now', access: manage, params: Id, errors: [404],
    response: ChannelTestOut,
    handler: async ({ deps, params }) => testSend(deps, await channelForSend(deps, params.id)),
    audit: { action: 'alert_channel.test', target: (c) => c.params.id },
  }),
  route({
    method: 'GET', path: '/api/alerts/deliveries', tag: 'alerts', summary: 'Notification deliveries and their attempts', access: view, response: DeliveryListOut,
    query: T.Object({ status: T.Optional(OneOf(['pending', 'sent', 'failed'] as const)), ...paging(500, 100) }),
    handler: ({ deps, query }) => listDeliveries(deps, query),
  }),
  route({ method: 'GET', path: '/api/alerts/:id', tag: 'alerts', summary: 'One alert', access: view, params: Id, errors: [404], response: AlertOut, handler: ({ deps, params }) => getAlert(deps, params.id) }),
  route({
    method: 'POST', path: '/api/alerts/:id/ack', tag: 'alerts', summary: 'Acknowledge an alert', access: { verb: 'ack', resource: 'alert:*' }, params: Id, errors: [404], response: AlertOut,
    handler: ({ deps, params, principal }) => ackAlert(deps, params.id, principal.username),
    audit: { action: 'alert.ack', target: (c) => c.params.id },
  }),
]
