/** Alert rules, alerts, silences and deliveries as the API reads and writes them (contract §11). */
import type { SQLQueryBindings } from 'bun:sqlite'
import type { AppDeps } from '../../deps'
import { Conflict, Invalid, NotFound } from '../../lib/errors'
import { iso, isoOrNull } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { unknownChannels } from './channel-store'

/** The rule kinds Saltdeck evaluates. */
export const RULE_KINDS = ['run_failed', 'run_blocked', 'run_changed', 'minion_offline', 'key_pending', 'salt_unreachable', 'master_unreachable', 'vulnerable'] as const
export type RuleKind = (typeof RULE_KINDS)[number]
/** The kinds about the whole fleet rather than a minion: their minion glob is always "*". */
export const FLEET_KINDS: readonly RuleKind[] = ['salt_unreachable', 'master_unreachable']

/** The parameters each kind takes, with their defaults. */
export const KIND_DEFAULTS: Record<RuleKind, Record<string, unknown>> = {
  run_failed: { fun_glob: '*' }, run_blocked: { fun_glob: '*' }, run_changed: { fun_glob: '*' },
  minion_offline: { for_minutes: 10 }, key_pending: {}, salt_unreachable: { for_minutes: 5 }, master_unreachable: { for_minutes: 2 }, vulnerable: { min_severity: 'high' },
}

interface RuleRow {
  id: string
  name: string
  kind: RuleKind
  minion_glob: string
  params: string
  channel_ids: string
  enabled: number
  renotify_minutes: number
  created_at: number
  updated_at: number
}

const ruleOut = (r: RuleRow) => ({
  id: r.id, name: r.name, kind: r.kind, minion_glob: r.minion_glob, params: JSON.parse(r.params), channel_ids: JSON.parse(r.channel_ids),
  enabled: r.enabled === 1, renotify_minutes: r.renotify_minutes, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})
const ruleRow = (deps: AppDeps, id: string) => {
  const r = deps.db.$client.query<RuleRow, [string]>('SELECT * FROM alert_rules WHERE id = ?1').get(id)
  if (!r) throw new NotFound('Alert rule')
  return r
}

/** Every rule, by name. */
export const listRules = (deps: AppDeps) => ({ rules: deps.db.$client.query<RuleRow, []>('SELECT * FROM alert_rules ORDER BY name_key').all().map(ruleOut) })
/** One rule. */
export const getRule = (deps: AppDeps, id: string) => ruleOut(ruleRow(deps, id))

/** Refuses unknown channel ids, each by its place in channel_ids (the contract's 422 on body.channel_ids[i]). */
function checkChannels(deps: AppDeps, ids: string[]) {
  const bad = unknownChannels(deps, ids)
  if (bad.length) throw new Invalid(bad.map((id) => ({ field: ['channel_ids', ids.indexOf(id)], sentence: 'unknown channel id', value: id })))
}

const nameTaken = (deps: AppDeps, name: string, except = '') =>
  !!deps.db.$client.query<{ id: string }, [string, string]>('SELECT id FROM alert_rules WHERE name_key = ?1 AND id != ?2').get(name.toLowerCase(), except)

/** Creates a rule; it judges only what happens from now on. */
export function createRule(deps: AppDeps, b: { name: string; kind: RuleKind; minion_glob: string; params: Record<string, unknown>; channel_ids: string[]; enabled: boolean; renotify_minutes: number }) {
  checkChannels(deps, b.channel_ids)
  if (nameTaken(deps, b.name)) throw new Conflict('Alert rule name already exists')
  const now = deps.clock.now()
  const id = newId()
  deps.db.$client
    .query('INSERT INTO alert_rules (id, name, name_key, kind, minion_glob, params, channel_ids, enabled, renotify_minutes, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)')
    .run(id, b.name, b.name.toLowerCase(), b.kind, b.minion_glob, JSON.stringify({ ...KIND_DEFAULTS[b.kind], ...b.params }), JSON.stringify(b.channel_ids), b.enabled ? 1 : 0, b.renotify_minutes, now)
  return getRule(deps, id)
}

/** Changes a rule (its kind stays). */
export function updateRule(deps: AppDeps, id: string, b: { name?: string; minion_glob?: string; params?: Record<string, unknown>; channel_ids?: string[]; enabled?: boolean; renotify_minutes?: number }) {
  const r = ruleRow(deps, id)
  if (b.channel_ids) checkChannels(deps, b.channel_ids)
  if (b.name !== undefined && nameTaken(deps, b.name, id)) throw new Conflict('Alert rule name already exists')
  const name = b.name ?? r.name
  deps.db.$client
    .query('UPDATE alert_rules SET name = ?2, name_key = ?3, minion_glob = ?4, params = ?5, channel_ids = ?6, enabled = ?7, renotify_minutes = ?8, updated_at = ?9 WHERE id = ?1')
    .run(
      id, name, name.toLowerCase(), b.minion_glob ?? r.minion_glob, b.params ? JSON.stringify({ ...KIND_DEFAULTS[r.kind], ...b.params }) : r.params,
      b.channel_ids ? JSON.stringify(b.channel_ids) : r.channel_ids, b.enabled === undefined ? r.enabled : b.enabled ? 1 : 0, b.renotify_minutes ?? r.renotify_minutes, deps.clock.now(),
    )
  return getRule(deps, id)
}

/** Deletes a rule and its alerts. */
export function deleteRule(deps: AppDeps, id: string) {
  ruleRow(deps, id)
  deps.db.transaction(() => {
    deps.db.$client.query('DELETE FROM alerts WHERE rule_id = ?1').run(id)
    deps.db.$client.query('DELETE FROM alert_rules WHERE id = ?1').run(id)
  })
}

interface AlertRow {
  id: string
  rule_id: string
  rule_name: string
  kind: string
  subject: string
  state: string
  summary: string
  count: number
  first_seen_at: number
  last_seen_at: number
  resolved_at: number | null
  acked_by: string | null
  acked_at: number | null
  details: string
}

const alertOut = (r: AlertRow) => ({
  id: r.id, rule_id: r.rule_id, rule_name: r.rule_name, kind: r.kind, subject: r.subject, state: r.state, summary: r.summary, count: r.count,
  first_seen_at: iso(r.first_seen_at), last_seen_at: iso(r.last_seen_at), resolved_at: isoOrNull(r.resolved_at), acked_by: r.acked_by, acked_at: isoOrNull(r.acked_at),
  details: JSON.parse(r.details),
})
const ALERT = 'SELECT a.*, r.name AS rule_name, r.kind AS kind FROM alerts a JOIN alert_rules r ON r.id = a.rule_id'

/** Alerts newest first, by state, rule and subject. */
export function listAlerts(deps: AppDeps, q: { state: 'firing' | 'resolved' | 'all'; rule_id?: string; subject?: string; limit: number; offset: number }) {
  const where: string[] = []
  const args: SQLQueryBindings[] = []
  if (q.state !== 'all') where.push(`a.state = ?${args.push(q.state)}`)
  if (q.rule_id) where.push(`a.rule_id = ?${args.push(q.rule_id)}`)
  if (q.subject) where.push(`a.subject = ?${args.push(q.subject)}`)
  const w = where.length ? `WHERE ${where.join(' AND ')}` : ''
  const db = deps.db.$client
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM alerts a ${w}`).get(...args)!.n
  const rows = db.query<AlertRow, SQLQueryBindings[]>(`${ALERT} ${w} ORDER BY a.first_seen_at DESC, a.id DESC LIMIT ${q.limit} OFFSET ${q.offset}`).all(...args)
  return { total, alerts: rows.map(alertOut) }
}

/** One alert. */
export function getAlert(deps: AppDeps, id: string) {
  const r = deps.db.$client.query<AlertRow, [string]>(`${ALERT} WHERE a.id = ?1`).get(id)
  if (!r) throw new NotFound('Alert')
  return alertOut(r)
}

/** Acknowledges an alert (who and when); it keeps firing until its rule resolves it. */
export function ackAlert(deps: AppDeps, id: string, who: string) {
  getAlert(deps, id)
  deps.db.$client.query('UPDATE alerts SET acked_by = ?2, acked_at = ?3 WHERE id = ?1').run(id, who, deps.clock.now())
  return getAlert(deps, id)
}

interface SilenceRow {
  id: string
  rule_id: string | null
  subject_glob: string
  ends_at: number
  comment: string
  created_by: string
  created_at: number
}
const silenceOut = (r: SilenceRow) => ({ id: r.id, rule_id: r.rule_id, subject_glob: r.subject_glob, ends_at: iso(r.ends_at), comment: r.comment, created_by: r.created_by, created_at: iso(r.created_at) })

/** Silences, ending last first. */
export const listSilences = (deps: AppDeps) => ({ silences: deps.db.$client.query<SilenceRow, []>('SELECT * FROM alert_silences ORDER BY ends_at DESC, id').all().map(silenceOut) })

/** Creates a silence. */
export function createSilence(deps: AppDeps, who: string, b: { rule_id: string | null; subject_glob: string; ends_at: number; comment: string }) {
  if (b.rule_id) ruleRow(deps, b.rule_id)
  const id = newId()
  deps.db.$client.query('INSERT INTO alert_silences (id, rule_id, subject_glob, ends_at, comment, created_by, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)').run(id, b.rule_id, b.subject_glob, b.ends_at, b.comment, who, deps.clock.now())
  return silenceOut(deps.db.$client.query<SilenceRow, [string]>('SELECT * FROM alert_silences WHERE id = ?1').get(id)!)
}

/** Deletes a silence. */
export function deleteSilence(deps: AppDeps, id: string) {
  if (!deps.db.$client.query('DELETE FROM alert_silences WHERE id = ?1').run(id).changes) throw new NotFound('Silence')
}

/** Deliveries newest first, by status. */
export function listDeliveries(deps: AppDeps, q: { status?: 'pending' | 'sent' | 'failed'; limit: number; offset: number }) {
  const w = q.status ? 'WHERE status = ?1' : ''
  const args: SQLQueryBindings[] = q.status ? [q.status] : []
  const db = deps.db.$client
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM alert_deliveries ${w}`).get(...args)!.n
  const rows = db
    .query<{ id: string; notification_id: string; channel_id: string; status: string; attempts: number; last_error: string | null; next_attempt_at: number | null; sent_at: number | null }, SQLQueryBindings[]>(
      `SELECT id, notification_id, channel_id, status, attempts, last_error, next_attempt_at, sent_at FROM alert_deliveries ${w} ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`,
    )
    .all(...args)
  return { total, deliveries: rows.map((r) => ({ ...r, next_attempt_at: isoOrNull(r.next_attempt_at), sent_at: isoOrNull(r.sent_at) })) }
}

/** Figures for /metrics: alerts firing per kind, deliveries per status. */
export function alertStats(deps: AppDeps) {
  const db = deps.db.$client
  return {
    firing: db.query<{ kind: string; n: number }, []>("SELECT r.kind, count(*) AS n FROM alerts a JOIN alert_rules r ON r.id = a.rule_id WHERE a.state = 'firing' GROUP BY r.kind").all(),
    deliveries: db.query<{ status: string; n: number }, []>('SELECT status, count(*) AS n FROM alert_deliveries GROUP BY status').all(),
  }
}
