/** The SQL of alert rules and silences (contract §11): alert_rules and alert_silences. */
import { sql } from '../../db/sql'
import { twin, type Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { alertRules, alertSilences, alerts } from '../../db/schema'

/** A rule as stored. */
export type RuleRow = Row<typeof alertRules>
/** A silence as stored. */
export type SilenceRow = Row<typeof alertSilences>

/** One rule, or undefined. */
export const ruleById = (q: Queryable, id: string) => q.row<RuleRow>(sql`SELECT * FROM ${alertRules} WHERE ${alertRules.id} = ${id}`)

/** Every rule, by name. */
export const allRules = (q: Queryable) => q.rows<RuleRow>(sql`SELECT * FROM ${alertRules} ORDER BY ${alertRules.nameKey}`)

/** The enabled rules of some kinds, oldest first. */
export function enabledRulesOf(q: Queryable, kinds: readonly string[]): Promise<RuleRow[]> {
  if (!kinds.length) return Promise.resolve([])
  return q.rows<RuleRow>(sql`SELECT * FROM ${alertRules} WHERE ${alertRules.enabled} = 1 AND ${alertRules.kind} IN ${kinds} ORDER BY ${alertRules.createdAt}`)
}

/** Whether another rule than `except` has this name key. */
export async function nameKeyTaken(q: Queryable, nameKey: string, except: string): Promise<boolean> {
  return !!(await q.row<{ id: string }>(sql`SELECT ${alertRules.id} FROM ${alertRules} WHERE ${alertRules.nameKey} = ${nameKey} AND ${alertRules.id} != ${except}`))
}

/** Stores a new rule. */
export async function insertRule(q: Queryable, r: RuleRow) {
  await q.exec(sql`INSERT INTO ${alertRules} (id, name, name_key, kind, minion_glob, params, channel_ids, enabled, renotify_minutes, created_at, updated_at)
    VALUES (${r.id}, ${r.name}, ${r.name_key}, ${r.kind}, ${r.minion_glob}, ${r.params}, ${r.channel_ids}, ${r.enabled}, ${r.renotify_minutes}, ${r.created_at}, ${r.updated_at})`)
}

/** Writes a rule's changeable fields (its kind and creation time stay). */
export async function updateRuleRow(q: Queryable, r: Omit<RuleRow, 'kind' | 'created_at'>) {
  await q.exec(sql`UPDATE ${alertRules} SET name = ${r.name}, name_key = ${r.name_key}, minion_glob = ${r.minion_glob}, params = ${r.params},
    channel_ids = ${r.channel_ids}, enabled = ${r.enabled}, renotify_minutes = ${r.renotify_minutes}, updated_at = ${r.updated_at} WHERE id = ${r.id}`)
}

/** Deletes a rule and its alerts, in one transaction of `q`'s caller. */
export async function deleteRuleRows(q: Queryable, id: string) {
  await q.exec(sql`DELETE FROM ${alerts} WHERE ${alerts.ruleId} = ${id}`)
  await q.exec(sql`DELETE FROM ${alertRules} WHERE ${alertRules.id} = ${id}`)
}

/** The name of a rule naming this channel among its channel_ids (a JSON list), if any. */
export async function ruleUsingChannel(q: Queryable, channelId: string): Promise<string | undefined> {
  const names = twin(q, {
    sqlite: sql`SELECT ${alertRules.name} FROM ${alertRules} WHERE EXISTS (SELECT 1 FROM json_each(${alertRules.channelIds}) WHERE value = ${channelId}) LIMIT 1`,
    postgres: sql`SELECT ${alertRules.name} FROM ${alertRules} WHERE ${alertRules.channelIds}::jsonb @> jsonb_build_array(${channelId}::text) LIMIT 1`,
  })
  return (await q.row<Pick<RuleRow, 'name'>>(names))?.name
}

/** Every silence, ending last first. */
export const allSilences = (q: Queryable) => q.rows<SilenceRow>(sql`SELECT * FROM ${alertSilences} ORDER BY ${alertSilences.endsAt} DESC, ${alertSilences.id}`)

/** One silence, or undefined. */
export const silenceById = (q: Queryable, id: string) => q.row<SilenceRow>(sql`SELECT * FROM ${alertSilences} WHERE ${alertSilences.id} = ${id}`)

/** The silences still in force at `now`. */
export const silencesInForce = (q: Queryable, now: number) =>
  q.rows<Pick<SilenceRow, 'rule_id' | 'subject_glob'>>(sql`SELECT ${alertSilences.ruleId}, ${alertSilences.subjectGlob} FROM ${alertSilences} WHERE ${alertSilences.endsAt} > ${now}`)

/** Stores a new silence. */
export async function insertSilence(q: Queryable, s: SilenceRow) {
  await q.exec(sql`INSERT INTO ${alertSilences} (id, rule_id, subject_glob, ends_at, comment, created_by, created_at)
    VALUES (${s.id}, ${s.rule_id}, ${s.subject_glob}, ${s.ends_at}, ${s.comment}, ${s.created_by}, ${s.created_at})`)
}

/** Deletes a silence; whether there was one. */
export async function deleteSilenceRow(q: Queryable, id: string): Promise<boolean> {
  return (await q.exec(sql`DELETE FROM ${alertSilences} WHERE ${alertSilences.id} = ${id}`)) > 0
}
