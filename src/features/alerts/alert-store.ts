/**
 * The SQL of alerts and the outbox entries their changes write (contract §11): one open alert per (rule, subject),
 * a repeat bumps its count, resolving closes it; each change someone should hear of goes to alert_transitions.
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import { twin, type Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { alertRules, alertTransitions, alerts } from '../../db/schema'

/** An alert as stored. */
export type AlertRow = Row<typeof alerts>
/** An alert as the API reads it: with its rule's name and kind. */
export type AlertWithRule = AlertRow & { rule_name: string; kind: string }

/** Writes an outbox entry for a transition. */
export async function insertTransition(q: Queryable, ruleId: string, alertId: string, status: 'firing' | 'resolved', at: number) {
  await q.exec(sql`INSERT INTO ${alertTransitions} (rule_id, alert_id, status, at) VALUES (${ruleId}, ${alertId}, ${status}, ${at})`)
}

/** Opens the rule's alert for a subject, or bumps the open one; its id and count (1 when it is new). */
export async function upsertFiring(q: Queryable, a: { id: string; ruleId: string; subject: string; summary: string; at: number; details: string }) {
  // The newest sighting wins; an older one arriving late must not move last_seen_at back.
  const later = twin(q, {
    sqlite: sql`max(${alerts.lastSeenAt}, excluded.last_seen_at)`,
    postgres: sql`greatest(${alerts.lastSeenAt}, excluded.last_seen_at)`,
  })
  const r = await q.row<Pick<AlertRow, 'id' | 'count'>>(sql`
    INSERT INTO ${alerts} (id, rule_id, subject, state, summary, count, first_seen_at, last_seen_at, details)
    VALUES (${a.id}, ${a.ruleId}, ${a.subject}, 'firing', ${a.summary}, 1, ${a.at}, ${a.at}, ${a.details})
    ON CONFLICT (rule_id, subject) WHERE state = 'firing'
    DO UPDATE SET count = ${alerts.count} + 1, last_seen_at = ${later}, summary = excluded.summary, details = excluded.details
    RETURNING id, count`)
  return r!
}

/** Stores an alert that is its own occurrence: resolved at once. */
export async function insertOccurrence(q: Queryable, a: { id: string; ruleId: string; subject: string; summary: string; at: number; details: string }) {
  await q.exec(sql`INSERT INTO ${alerts} (id, rule_id, subject, state, summary, count, first_seen_at, last_seen_at, resolved_at, details)
    VALUES (${a.id}, ${a.ruleId}, ${a.subject}, 'resolved', ${a.summary}, 1, ${a.at}, ${a.at}, ${a.at}, ${a.details})`)
}

/** Resolves the rule's open alert for a subject; its id, or undefined when none was open. */
export async function resolveFiring(q: Queryable, ruleId: string, subject: string, at: number, summary: string): Promise<string | undefined> {
  const r = await q.row<Pick<AlertRow, 'id'>>(sql`UPDATE ${alerts} SET state = 'resolved', resolved_at = ${at}, summary = ${summary}
    WHERE ${alerts.ruleId} = ${ruleId} AND ${alerts.subject} = ${subject} AND ${alerts.state} = 'firing' RETURNING id`)
  return r?.id
}

/** The subjects a rule has firing now. */
export async function firingSubjectsOf(q: Queryable, ruleId: string): Promise<string[]> {
  const rows = await q.rows<Pick<AlertRow, 'subject'>>(sql`SELECT ${alerts.subject} FROM ${alerts} WHERE ${alerts.ruleId} = ${ruleId} AND ${alerts.state} = 'firing'`)
  return rows.map((r) => r.subject)
}

const WITH_RULE = sql`SELECT ${alerts}.*, ${alertRules.name} AS rule_name, ${alertRules.kind} AS kind FROM ${alerts} JOIN ${alertRules} ON ${alertRules.id} = ${alerts.ruleId}`

/** A page of alerts newest first, by state, rule and subject, and how many match. */
export async function alertPage(q: Queryable, f: { state?: string; ruleId?: string; subject?: string; limit: number; offset: number }) {
  const where: SQL[] = []
  if (f.state) where.push(sql`${alerts.state} = ${f.state}`)
  if (f.ruleId) where.push(sql`${alerts.ruleId} = ${f.ruleId}`)
  if (f.subject) where.push(sql`${alerts.subject} = ${f.subject}`)
  const w = where.length ? sql`WHERE ${sql.join(where, sql` AND `)}` : sql.empty()
  const total = (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${alerts} ${w}`))!.n
  const rows = await q.rows<AlertWithRule>(sql`${WITH_RULE} ${w} ORDER BY ${alerts.firstSeenAt} DESC, ${alerts.id} DESC LIMIT ${limitOf(f.limit)} OFFSET ${f.offset}`)
  return { total, rows }
}

/** One alert with its rule's name and kind, or undefined. */
export const alertById = (q: Queryable, id: string) => q.row<AlertWithRule>(sql`${WITH_RULE} WHERE ${alerts.id} = ${id}`)

/** Records who acknowledged an alert and when. */
export async function ackAlertRow(q: Queryable, id: string, who: string, at: number) {
  await q.exec(sql`UPDATE ${alerts} SET acked_by = ${who}, acked_at = ${at} WHERE ${alerts.id} = ${id}`)
}

/** Alerts firing now, per rule kind (for /metrics). */
export const firingByKind = (q: Queryable) =>
  q.rows<{ kind: string; n: number }>(sql`SELECT ${alertRules.kind} AS kind, count(*) AS n FROM ${alerts} JOIN ${alertRules} ON ${alertRules.id} = ${alerts.ruleId}
    WHERE ${alerts.state} = 'firing' GROUP BY ${alertRules.kind}`)
