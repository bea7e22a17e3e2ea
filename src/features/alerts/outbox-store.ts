/**
 * The SQL of the durable path of a notification (contract §11): waiting transitions, the notifications they become,
 * one delivery per channel, and every attempt.
 */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import { jsonRows } from '../../db/json-rows'
import { twin, type Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { alertAttempts, alertDeliveries, alertNotifications, alertRules, alertTransitions, alerts } from '../../db/schema'

/** A transition as stored. */
export type TransitionRow = Row<typeof alertTransitions>
/** A delivery as stored. */
export type DeliveryRow = Row<typeof alertDeliveries>
/** What the sender needs of a due delivery. */
export type DueDelivery = Pick<DeliveryRow, 'id' | 'notification_id' | 'channel_id' | 'attempts' | 'created_at'>

/**
 * The values of a list, as a subquery: one JSON parameter however long the list (a group of a fleet-wide rule can
 * name 50,000 alerts, past both engines' parameter limits).
 */
function listed(q: Queryable, values: readonly (string | number)[], type: 'text' | 'bigint'): SQL {
  const json = jsonRows(values)
  // PostgreSQL: the parameter is text, cast after; typed jsonb, the driver would send the string as a JSON string.
  return twin(q, {
    sqlite: sql`(SELECT value FROM json_each(${json}))`,
    postgres: type === 'text' ? sql`(SELECT jsonb_array_elements_text(CAST(${json} AS text)::jsonb))` : sql`(SELECT jsonb_array_elements_text(CAST(${json} AS text)::jsonb)::bigint)`,
  })
}

/** The rules with a transition waiting since `cut` or before. */
export async function rulesWaitingSince(q: Queryable, cut: number): Promise<string[]> {
  const rows = await q.rows<Pick<TransitionRow, 'rule_id'>>(sql`SELECT ${alertTransitions.ruleId} FROM ${alertTransitions}
    WHERE ${alertTransitions.notificationId} IS NULL GROUP BY ${alertTransitions.ruleId} HAVING min(${alertTransitions.at}) <= ${cut}`)
  return rows.map((r) => r.rule_id)
}

/** A rule's waiting transitions, in the order they were written. */
export const waitingTransitions = (q: Queryable, ruleId: string) =>
  q.rows<Pick<TransitionRow, 'id' | 'rule_id' | 'alert_id' | 'status' | 'at'>>(sql`SELECT ${alertTransitions.id}, ${alertTransitions.ruleId}, ${alertTransitions.alertId}, ${alertTransitions.status}, ${alertTransitions.at}
    FROM ${alertTransitions} WHERE ${alertTransitions.notificationId} IS NULL AND ${alertTransitions.ruleId} = ${ruleId} ORDER BY ${alertTransitions.id}`)

/** Marks transitions as gone out in a notification (or set aside: 'silenced', 'rule-deleted'). */
export async function markTransitions(q: Queryable, ids: number[], notificationId: string) {
  if (ids.length) await q.exec(sql`UPDATE ${alertTransitions} SET notification_id = ${notificationId} WHERE ${alertTransitions.id} IN ${listed(q, ids, 'bigint')}`)
}

/** The alerts a notification lists, by subject. */
export function alertsToTell(q: Queryable, ids: string[]) {
  if (!ids.length) return Promise.resolve([])
  return q.rows<Pick<Row<typeof alerts>, 'id' | 'subject' | 'summary' | 'first_seen_at' | 'details'>>(sql`SELECT ${alerts.id}, ${alerts.subject}, ${alerts.summary}, ${alerts.firstSeenAt}, ${alerts.details}
    FROM ${alerts} WHERE ${alerts.id} IN ${listed(q, ids, 'text')} ORDER BY ${alerts.subject}`)
}

/** Stores a notification and one pending delivery per channel, due now. */
export async function insertNotification(q: Queryable, n: Row<typeof alertNotifications>, deliveries: { id: string; channelId: string }[]) {
  await q.exec(sql`INSERT INTO ${alertNotifications} (id, rule_id, status, body, created_at) VALUES (${n.id}, ${n.rule_id}, ${n.status}, ${n.body}, ${n.created_at})`)
  for (const d of deliveries)
    await q.exec(sql`INSERT INTO ${alertDeliveries} (id, notification_id, channel_id, status, attempts, next_attempt_at, created_at)
      VALUES (${d.id}, ${n.id}, ${d.channelId}, 'pending', 0, ${n.created_at}, ${n.created_at})`)
}

/** Records when a notification last went out for these alerts (renotify counts from there). */
export async function markNotified(q: Queryable, alertIds: string[], at: number) {
  if (alertIds.length) await q.exec(sql`UPDATE ${alerts} SET notified_at = ${at} WHERE ${alerts.id} IN ${listed(q, alertIds, 'text')}`)
}

/** Writes a renotify transition for each alert still firing past its rule's renotify_minutes; how many. */
export function insertRenotifies(q: Queryable, now: number): Promise<number> {
  // Cast: a bare parameter in a SELECT list has no type PostgreSQL could infer from the column it lands in.
  const at = sql`CAST(${now} AS bigint)`
  return q.exec(sql`INSERT INTO ${alertTransitions} (rule_id, alert_id, status, at)
    SELECT ${alerts.ruleId}, ${alerts.id}, 'firing', ${at} FROM ${alerts} JOIN ${alertRules} ON ${alertRules.id} = ${alerts.ruleId}
    WHERE ${alerts.state} = 'firing' AND ${alertRules.enabled} = 1 AND ${alertRules.renotifyMinutes} > 0 AND ${alerts.notifiedAt} IS NOT NULL
      AND ${alerts.notifiedAt} <= ${at} - ${alertRules.renotifyMinutes} * 60000
      AND NOT EXISTS (SELECT 1 FROM ${alertTransitions} t WHERE t.alert_id = ${alerts.id} AND t.notification_id IS NULL)`)
}

/**
 * Claims the due deliveries to send now, in one statement: the oldest due one of each channel not in `busy`, up to
 * `limit`. A claim moves next_attempt_at to `leaseUntil`, so no other claim takes it while its attempt is under way,
 * and a sender that dies mid-attempt leaves it due again at `leaseUntil` (at least once). The outer conditions are
 * checked again on the row itself, so on PostgreSQL two claims racing for one delivery give it to one of them.
 */
export function claimDue(q: Queryable, now: number, busy: string[], limit: number, leaseUntil: number): Promise<DueDelivery[]> {
  const notBusy = busy.length ? sql`AND ${alertDeliveries.channelId} NOT IN ${busy}` : sql.empty()
  const due: SQL = sql`${alertDeliveries.status} = 'pending' AND ${alertDeliveries.nextAttemptAt} <= ${now}`
  return q.rows<DueDelivery>(sql`UPDATE ${alertDeliveries} SET next_attempt_at = ${leaseUntil}
    WHERE ${due} AND ${alertDeliveries.id} IN (
      SELECT id FROM (
        SELECT ${alertDeliveries.id} AS id, ${alertDeliveries.nextAttemptAt} AS next_at,
          row_number() OVER (PARTITION BY ${alertDeliveries.channelId} ORDER BY ${alertDeliveries.nextAttemptAt}, ${alertDeliveries.id}) AS nth
        FROM ${alertDeliveries} WHERE ${due} ${notBusy}) d
      WHERE nth = 1 ORDER BY next_at LIMIT ${limitOf(limit)})
    RETURNING id, notification_id, channel_id, attempts, created_at`)
}

/** A notification's webhook body, or undefined when it is gone. */
export async function notificationBody(q: Queryable, id: string): Promise<string | undefined> {
  return (await q.row<Pick<Row<typeof alertNotifications>, 'body'>>(sql`SELECT ${alertNotifications.body} FROM ${alertNotifications} WHERE ${alertNotifications.id} = ${id}`))?.body
}

/** Records an attempt and the delivery's state after it (sent; or pending until `nextAt`; or failed when `nextAt` is null). */
export async function recordAttempt(q: Queryable, d: { id: string; at: number; ok: boolean; detail: string; attempts: number; nextAt: number | null }) {
  await q.exec(sql`INSERT INTO ${alertAttempts} (delivery_id, at, ok, detail) VALUES (${d.id}, ${d.at}, ${d.ok ? 1 : 0}, ${d.detail})`)
  if (d.ok)
    await q.exec(sql`UPDATE ${alertDeliveries} SET status = 'sent', attempts = ${d.attempts}, sent_at = ${d.at}, last_error = NULL, next_attempt_at = NULL WHERE ${alertDeliveries.id} = ${d.id}`)
  else
    await q.exec(sql`UPDATE ${alertDeliveries} SET status = ${d.nextAt === null ? 'failed' : 'pending'}, attempts = ${d.attempts}, last_error = ${d.detail}, next_attempt_at = ${d.nextAt}
      WHERE ${alertDeliveries.id} = ${d.id}`)
}

/** A page of deliveries newest first, by status, and how many match. */
export async function deliveryPage(q: Queryable, f: { status?: string; limit: number; offset: number }) {
  const w = f.status ? sql`WHERE ${alertDeliveries.status} = ${f.status}` : sql.empty()
  const total = (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${alertDeliveries} ${w}`))!.n
  const rows = await q.rows<Pick<DeliveryRow, 'id' | 'notification_id' | 'channel_id' | 'status' | 'attempts' | 'last_error' | 'next_attempt_at' | 'sent_at'>>(sql`
    SELECT ${alertDeliveries.id}, ${alertDeliveries.notificationId}, ${alertDeliveries.channelId}, ${alertDeliveries.status}, ${alertDeliveries.attempts},
      ${alertDeliveries.lastError}, ${alertDeliveries.nextAttemptAt}, ${alertDeliveries.sentAt}
    FROM ${alertDeliveries} ${w} ORDER BY ${alertDeliveries.createdAt} DESC, ${alertDeliveries.id} DESC LIMIT ${limitOf(f.limit)} OFFSET ${f.offset}`)
  return { total, rows }
}

/** Deliveries per status (for /metrics). */
export const deliveriesByStatus = (q: Queryable) =>
  q.rows<{ status: string; n: number }>(sql`SELECT ${alertDeliveries.status} AS status, count(*) AS n FROM ${alertDeliveries} GROUP BY ${alertDeliveries.status}`)
