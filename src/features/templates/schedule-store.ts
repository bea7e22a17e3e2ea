/** Schedules (contract §16): the SQL of `schedules` and `schedule_firings`. What a schedule does is in schedules.ts. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { jobTemplates, scheduleFirings, schedules, users } from '../../db/schema'

/** A schedule as stored, with its template's name and its creator's username (null once either is deleted). */
export type ScheduleRow = Row<typeof schedules> & { template_name: string | null; creator: string | null }

const SELECT = sql`SELECT ${schedules}.*, ${jobTemplates.name} AS template_name, ${users.username} AS creator FROM ${schedules}
  LEFT JOIN ${jobTemplates} ON ${jobTemplates.id} = ${schedules.templateId} LEFT JOIN ${users} ON ${users.id} = ${schedules.createdBy}`

/** One schedule by id. */
export const scheduleRow = (q: Queryable, id: string) => q.row<ScheduleRow>(sql`${SELECT} WHERE ${schedules.id} = ${id}`)

/** Every schedule, by name. */
export const scheduleRows = (q: Queryable) => q.rows<ScheduleRow>(sql`${SELECT} ORDER BY ${schedules.nameKey}, ${schedules.id}`)

/** The enabled schedules due at `now`, the most overdue first. */
export const dueScheduleRows = (q: Queryable, now: number) =>
  q.rows<ScheduleRow>(sql`${SELECT} WHERE ${schedules.enabled} = 1 AND ${schedules.nextRunAt} <= ${now} ORDER BY ${schedules.nextRunAt}, ${schedules.id}`)

/** Whether another schedule (not `except`) has this name key. */
export async function scheduleNameTaken(q: Queryable, nameKey: string, except: string): Promise<boolean> {
  return !!(await q.row(sql`SELECT ${schedules.id} FROM ${schedules} WHERE ${schedules.nameKey} = ${nameKey} AND ${schedules.id} != ${except}`))
}

/** The first schedule (by name) that runs a template, or undefined. */
export const firstScheduleOf = (q: Queryable, templateId: string) =>
  q.row<Pick<Row<typeof schedules>, 'name'>>(sql`SELECT ${schedules.name} FROM ${schedules} WHERE ${schedules.templateId} = ${templateId} ORDER BY ${schedules.nameKey} LIMIT 1`)

/** The fields of a schedule row a create or an update writes. */
export type ScheduleWrite = Pick<Row<typeof schedules>, 'name' | 'name_key' | 'template_id' | 'cron' | 'timezone' | 'enabled' | 'next_run_at'>

/** Stores a new schedule. */
export async function insertSchedule(q: Queryable, id: string, createdBy: string, f: ScheduleWrite, now: number) {
  await q.exec(sql`INSERT INTO ${schedules} (id, name, name_key, template_id, cron, timezone, enabled, next_run_at, created_by, created_at, updated_at)
    VALUES (${id}, ${f.name}, ${f.name_key}, ${f.template_id}, ${f.cron}, ${f.timezone}, ${f.enabled}, ${f.next_run_at}, ${createdBy}, ${now}, ${now})`)
}

/** Rewrites a schedule's fields and the reason it was last disabled. */
export async function updateScheduleRow(q: Queryable, id: string, f: ScheduleWrite, lastError: string | null, now: number) {
  await q.exec(sql`UPDATE ${schedules} SET name = ${f.name}, name_key = ${f.name_key}, template_id = ${f.template_id}, cron = ${f.cron},
    timezone = ${f.timezone}, enabled = ${f.enabled}, next_run_at = ${f.next_run_at}, last_error = ${lastError}, updated_at = ${now}
    WHERE ${schedules.id} = ${id}`)
}

/** Deletes a schedule and its firing claims (run it in a transaction). */
export async function deleteScheduleRows(q: Queryable, id: string) {
  await q.exec(sql`DELETE FROM ${scheduleFirings} WHERE ${scheduleFirings.scheduleId} = ${id}`)
  await q.exec(sql`DELETE FROM ${schedules} WHERE ${schedules.id} = ${id}`)
}

/**
 * Claims one firing: inserts its (schedule, due time) row, true when this call inserted it; the insert alone is the
 * claim, atomic on both engines (the primary key settles a race). Whoever claims or not, the schedule then moves from
 * `dueAt` to `next` only if it still stands at `dueAt` (a compare-and-set, so the claimer's move is never undone), and
 * a claimer that stopped between the two statements leaves a schedule the next tick moves on without firing. No
 * transaction: two connections of one process (two instances in a test) would each hold one across an await.
 */
export async function claimFiringRow(q: Queryable, id: string, dueAt: number, next: number | null, now: number): Promise<boolean> {
  const claimed = (await q.exec(sql`INSERT INTO ${scheduleFirings} (schedule_id, due_at, claimed_at) VALUES (${id}, ${dueAt}, ${now}) ON CONFLICT DO NOTHING`)) === 1
  await q.exec(sql`UPDATE ${schedules} SET next_run_at = ${next} WHERE ${schedules.id} = ${id} AND ${schedules.nextRunAt} = ${dueAt}`)
  return claimed
}

/** Drops firing claims due before `before`. */
export async function pruneFirings(q: Queryable, before: number) {
  await q.exec(sql`DELETE FROM ${scheduleFirings} WHERE ${scheduleFirings.dueAt} < ${before}`)
}

/** Turns a schedule off, saying why. */
export async function disableScheduleRow(q: Queryable, id: string, reason: string, now: number) {
  await q.exec(sql`UPDATE ${schedules} SET enabled = 0, next_run_at = NULL, last_error = ${reason}, updated_at = ${now} WHERE ${schedules.id} = ${id}`)
}

/** Records a firing's outcome: its job, or the error that kept it from running. */
export async function setLastRun(q: Queryable, id: string, at: number, jid: string | null, error: string | null) {
  await q.exec(sql`UPDATE ${schedules} SET last_run_at = ${at}, last_jid = ${jid}, last_error = ${error} WHERE ${schedules.id} = ${id}`)
}

/** The user a schedule fires as: its name and whether it may still act; undefined once deleted. */
export const scheduleCreator = (q: Queryable, userId: string) =>
  q.row<Pick<Row<typeof users>, 'username' | 'is_active'>>(sql`SELECT ${users.username}, ${users.isActive} FROM ${users} WHERE ${users.id} = ${userId}`)
