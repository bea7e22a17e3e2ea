/** Alert rules, alerts, silences and deliveries as the API reads and writes them (contract §11). */
import type { AppDeps } from '../../deps'
import { Conflict, Invalid, NotFound } from '../../lib/errors'
import { iso, isoOrNull } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { unknownChannels } from './channel-store'
import { ackAlertRow, alertById, alertPage, firingByKind, type AlertWithRule } from './alert-store'
import { deliveriesByStatus, deliveryPage } from './outbox-store'
import {
  allRules, allSilences, deleteRuleRows, deleteSilenceRow, insertRule, insertSilence, nameKeyTaken, ruleById, silenceById, updateRuleRow, type RuleRow, type SilenceRow,
} from './rule-store'
import { RULE_KINDS } from './schema'

/** The rule kinds Saltdeck evaluates (spelled beside the answer schemas, which name them too). */
export { RULE_KINDS }
export type RuleKind = (typeof RULE_KINDS)[number]
/** The kinds about the whole fleet rather than a minion: their minion glob is always "*". */
export const FLEET_KINDS: readonly RuleKind[] = ['salt_unreachable', 'master_unreachable']

/** The parameters each kind takes, with their defaults. */
export const KIND_DEFAULTS: Record<RuleKind, Record<string, unknown>> = {
  run_failed: { fun_glob: '*' }, run_blocked: { fun_glob: '*' }, run_changed: { fun_glob: '*' },
  minion_offline: { for_minutes: 10 }, key_pending: {}, salt_unreachable: { for_minutes: 5 }, master_unreachable: { for_minutes: 2 }, vulnerable: { min_severity: 'high' },
}

const ruleOut = (r: RuleRow) => ({
  id: r.id, name: r.name, kind: r.kind as RuleKind, minion_glob: r.minion_glob, params: JSON.parse(r.params), channel_ids: JSON.parse(r.channel_ids),
  enabled: r.enabled === 1, renotify_minutes: r.renotify_minutes, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})
const ruleRow = async (deps: AppDeps, id: string) => {
  const r = await ruleById(deps.db, id)
  if (!r) throw new NotFound('Alert rule')
  return r
}

/** Every rule, by name. */
export const listRules = async (deps: AppDeps) => ({ rules: (await allRules(deps.db)).map(ruleOut) })
/** One rule. */
export const getRule = async (deps: AppDeps, id: string) => ruleOut(await ruleRow(deps, id))

/** Refuses unknown channel ids, each by its place in channel_ids (the contract's 422 on body.channel_ids[i]). */
async function checkChannels(deps: AppDeps, ids: string[]) {
  const bad = await unknownChannels(deps, ids)
  if (bad.length) throw new Invalid(bad.map((id) => ({ field: ['channel_ids', ids.indexOf(id)], sentence: 'unknown channel id', value: id })))
}

const nameTaken = (deps: AppDeps, name: string, except = '') => nameKeyTaken(deps.db, name.toLowerCase(), except)

/** Creates a rule; it judges only what happens from now on. */
export async function createRule(deps: AppDeps, b: { name: string; kind: RuleKind; minion_glob: string; params: Record<string, unknown>; channel_ids: string[]; enabled: boolean; renotify_minutes: number }) {
  await checkChannels(deps, b.channel_ids)
  if (await nameTaken(deps, b.name)) throw new Conflict('Alert rule name already exists')
  const now = deps.clock.now()
  const id = newId()
  await insertRule(deps.db, {
    id, name: b.name, name_key: b.name.toLowerCase(), kind: b.kind, minion_glob: b.minion_glob, params: JSON.stringify({ ...KIND_DEFAULTS[b.kind], ...b.params }),
    channel_ids: JSON.stringify(b.channel_ids), enabled: b.enabled ? 1 : 0, renotify_minutes: b.renotify_minutes, created_at: now, updated_at: now,
  })
  return getRule(deps, id)
}

/** Changes a rule (its kind stays). */
export async function updateRule(deps: AppDeps, id: string, b: { name?: string; minion_glob?: string; params?: Record<string, unknown>; channel_ids?: string[]; enabled?: boolean; renotify_minutes?: number }) {
  const r = await ruleRow(deps, id)
  if (b.channel_ids) await checkChannels(deps, b.channel_ids)
  if (b.name !== undefined && (await nameTaken(deps, b.name, id))) throw new Conflict('Alert rule name already exists')
  const name = b.name ?? r.name
  await updateRuleRow(deps.db, {
    id, name, name_key: name.toLowerCase(), minion_glob: b.minion_glob ?? r.minion_glob,
    params: b.params ? JSON.stringify({ ...KIND_DEFAULTS[r.kind as RuleKind], ...b.params }) : r.params, channel_ids: b.channel_ids ? JSON.stringify(b.channel_ids) : r.channel_ids,
    enabled: b.enabled === undefined ? r.enabled : b.enabled ? 1 : 0, renotify_minutes: b.renotify_minutes ?? r.renotify_minutes, updated_at: deps.clock.now(),
  })
  return getRule(deps, id)
}

/** Deletes a rule and its alerts. */
export async function deleteRule(deps: AppDeps, id: string) {
  await ruleRow(deps, id)
  await deps.db.tx((tx) => deleteRuleRows(tx, id))
}

const alertOut = (r: AlertWithRule) => ({
  id: r.id, rule_id: r.rule_id, rule_name: r.rule_name, kind: r.kind, subject: r.subject, state: r.state, summary: r.summary, count: r.count,
  first_seen_at: iso(r.first_seen_at), last_seen_at: iso(r.last_seen_at), resolved_at: isoOrNull(r.resolved_at), acked_by: r.acked_by, acked_at: isoOrNull(r.acked_at),
  details: JSON.parse(r.details),
})
/** Alerts newest first, by state, rule and subject. */
export async function listAlerts(deps: AppDeps, q: { state: 'firing' | 'resolved' | 'all'; rule_id?: string; subject?: string; limit: number; offset: number }) {
  const { total, rows } = await alertPage(deps.db, { state: q.state === 'all' ? undefined : q.state, ruleId: q.rule_id, subject: q.subject, limit: q.limit, offset: q.offset })
  return { total, alerts: rows.map(alertOut) }
}

/** One alert. */
export async function getAlert(deps: AppDeps, id: string) {
  const r = await alertById(deps.db, id)
  if (!r) throw new NotFound('Alert')
  return alertOut(r)
}

/** Acknowledges an alert (who and when); it keeps firing until its rule resolves it. */
export async function ackAlert(deps: AppDeps, id: string, who: string) {
  await getAlert(deps, id)
  await ackAlertRow(deps.db, id, who, deps.clock.now())
  return getAlert(deps, id)
}
const silenceOut = (r: SilenceRow) => ({ id: r.id, rule_id: r.rule_id, subject_glob: r.subject_glob, ends_at: iso(r.ends_at), comment: r.comment, created_by: r.created_by, created_at: iso(r.created_at) })

/** Silences, ending last first. */
export const listSilences = async (deps: AppDeps) => ({ silences: (await allSilences(deps.db)).map(silenceOut) })

/** Creates a silence. */
export async function createSilence(deps: AppDeps, who: string, b: { rule_id: string | null; subject_glob: string; ends_at: number; comment: string }) {
  if (b.rule_id) await ruleRow(deps, b.rule_id)
  const id = newId()
  await insertSilence(deps.db, { id, rule_id: b.rule_id, subject_glob: b.subject_glob, ends_at: b.ends_at, comment: b.comment, created_by: who, created_at: deps.clock.now() })
  return silenceOut((await silenceById(deps.db, id))!)
}

/** Deletes a silence. */
export async function deleteSilence(deps: AppDeps, id: string) {
  if (!(await deleteSilenceRow(deps.db, id))) throw new NotFound('Silence')
}

/** Deliveries newest first, by status. */
export async function listDeliveries(deps: AppDeps, q: { status?: 'pending' | 'sent' | 'failed'; limit: number; offset: number }) {
  const { total, rows } = await deliveryPage(deps.db, q)
  return { total, deliveries: rows.map((r) => ({ ...r, next_attempt_at: isoOrNull(r.next_attempt_at), sent_at: isoOrNull(r.sent_at) })) }
}

/** Figures for /metrics: alerts firing per kind, deliveries per status. */
export async function alertStats(deps: AppDeps) {
  return { firing: await firingByKind(deps.db), deliveries: await deliveriesByStatus(deps.db) }
}
