/**
 * Schedules (contract §16): a template fired on a cron in an IANA time zone, as the user who created the schedule with
 * the permissions it holds at firing time (the SQL is in schedule-store.ts). Each firing is claimed by
 * inserting its (schedule, due time) row before anything is published, so with several instances over one database,
 * or after a restart, whoever inserts the row fires and the others skip it. A firing more than MISSED_AFTER_MS late
 * (Saltdeck was down at its time) is not replayed: the schedule moves on to its next time.
 */
import { Cron } from 'croner'
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { Conflict, Forbidden, NotFound } from '../../lib/errors'
import { iso, isoOrNull } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { recordEvents } from '../activity/service'
import { publishActivity } from '../activity/feed'
import { runTemplate } from './run'
import { getTemplate, templateById } from './service'
import {
  claimFiringRow, deleteScheduleRows, disableScheduleRow, dueScheduleRows, insertSchedule, pruneFirings, scheduleCreator, scheduleNameTaken, scheduleRow,
  scheduleRows, setLastRun, updateScheduleRow, type ScheduleRow, type ScheduleWrite,
} from './schedule-store'

/** How late a firing may still happen; later, Saltdeck was down (or stalled) at its time and it is skipped. */
export const MISSED_AFTER_MS = 120_000

const out = (r: ScheduleRow) => ({
  id: r.id, name: r.name, template_id: r.template_id, template_name: r.template_name, cron: r.cron, timezone: r.timezone, enabled: r.enabled === 1,
  next_run_at: isoOrNull(r.next_run_at), last_run_at: isoOrNull(r.last_run_at), last_jid: r.last_jid, last_error: r.last_error,
  created_by: r.creator, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})

/** Why a cron and time zone cannot be used (five fields, an IANA zone croner knows), or null when they can. */
export function cronProblem(cron: string, timezone: string): { field: 'cron' | 'timezone'; sentence: string } | null {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone })
  } catch {
    return { field: 'timezone', sentence: 'timezone must be an IANA time zone, e.g. Europe/Berlin or UTC' }
  }
  if (cron.trim().split(/\s+/).length !== 5) return { field: 'cron', sentence: 'cron must have five fields: minute hour day-of-month month day-of-week' }
  try {
    if (!new Cron(cron, { timezone, paused: true }).nextRun()) return { field: 'cron', sentence: 'cron never fires' }
  } catch (e) {
    return { field: 'cron', sentence: `cron is not valid: ${(e as Error).message}` }
  }
  return null
}

/** The first time after `after` (epoch ms) the cron fires in its zone; null when it never does again. */
export function nextFiring(cron: string, timezone: string, after: number): number | null {
  const d = new Cron(cron, { timezone, paused: true }).nextRun(new Date(after))
  return d ? d.getTime() : null
}

async function row(deps: AppDeps, id: string): Promise<ScheduleRow> {
  const r = await scheduleRow(deps.db, id)
  if (!r) throw new NotFound('Schedule')
  return r
}

/** Every schedule, by name. */
export const listSchedules = async (deps: AppDeps) => ({ schedules: (await scheduleRows(deps.db)).map(out) })
/** One schedule. */
export const getSchedule = async (deps: AppDeps, id: string) => out(await row(deps, id))

/** Who may change a schedule: its creator, or a holder of `manage template:*`. */
export interface ScheduleCaller {
  userId: string
  manageAll: boolean
}

const nameTaken = (deps: AppDeps, name: string, except: string) => scheduleNameTaken(deps.db, name.toLowerCase(), except)

/** The fields a schedule is made of. */
export interface ScheduleFields {
  name: string
  template_id: string
  cron: string
  timezone: string
  enabled: boolean
}

/** Creates a schedule of a template the user sees (NotFound otherwise), firing as that user. */
export async function createSchedule(deps: AppDeps, userId: string, f: ScheduleFields) {
  await getTemplate(deps, f.template_id, userId)
  if (await nameTaken(deps, f.name, '')) throw new Conflict('Schedule name already exists')
  const id = newId()
  const now = deps.clock.now()
  await insertSchedule(deps.db, id, userId, write(f, now), now)
  return getSchedule(deps, id)
}

/** The stored form of a schedule's fields, its next run computed from `now` (none while disabled). */
const write = (f: ScheduleFields, now: number): ScheduleWrite => ({
  name: f.name, name_key: f.name.toLowerCase(), template_id: f.template_id, cron: f.cron, timezone: f.timezone, enabled: f.enabled ? 1 : 0,
  next_run_at: f.enabled ? nextFiring(f.cron, f.timezone, now) : null,
})

/** Changes a schedule (its creator, or `manage template:*`); the next run is computed again from now. */
export async function updateSchedule(deps: AppDeps, id: string, c: ScheduleCaller, p: Partial<ScheduleFields>) {
  const r = await row(deps, id)
  if (r.created_by !== c.userId && !c.manageAll) throw new Forbidden()
  if (p.template_id !== undefined) await getTemplate(deps, p.template_id, c.userId)
  if (p.name !== undefined && (await nameTaken(deps, p.name, id))) throw new Conflict('Schedule name already exists')
  const m = { name: r.name, template_id: r.template_id, cron: r.cron, timezone: r.timezone, enabled: r.enabled === 1, ...p }
  const now = deps.clock.now()
  // Enabling again clears the reason it was disabled: the operator has seen it.
  const lastError = m.enabled && r.enabled !== 1 ? null : r.last_error
  await updateScheduleRow(deps.db, id, write(m, now), lastError, now)
  return getSchedule(deps, id)
}

/** Deletes a schedule (its creator, or `manage template:*`); returns its name. */
export async function deleteSchedule(deps: AppDeps, id: string, c: ScheduleCaller): Promise<string> {
  const r = await row(deps, id)
  if (r.created_by !== c.userId && !c.manageAll) throw new Forbidden()
  await deps.db.tx((tx) => deleteScheduleRows(tx, id))
  return r.name
}

/**
 * Claims one firing (see claimFiringRow) and moves the schedule to its next time. False when another instance (or
 * this one before a restart) already claimed it.
 */
export const claimFiring = (deps: AppDeps, id: string, dueAt: number, next: number | null): Promise<boolean> =>
  claimFiringRow(deps.db, id, dueAt, next, deps.clock.now())

/** Stores the events of a firing and tells the live streams. */
async function event(deps: AppDeps, s: ScheduleRow, type: string, summary: string, extra: { jid?: string; fun?: string; success: boolean }) {
  publishActivity(deps, await recordEvents(deps, [{ ts: deps.clock.now(), category: 'job', event_type: type, initiator: s.creator, target: s.name, summary, ...extra }]))
}

/** Turns a schedule off with the reason, as when its creator lost the permission. */
async function disable(deps: AppDeps, s: ScheduleRow, reason: string) {
  await disableScheduleRow(deps.db, s.id, reason, deps.clock.now())
  await event(deps, s, 'job.schedule_disabled', `Schedule ${s.name} disabled: ${reason}`, { success: false })
}

/** Fires one claimed schedule as its creator; records the outcome on the schedule and as an activity event. */
async function fire(deps: AppDeps, client: SaltClient, s: ScheduleRow) {
  const now = deps.clock.now()
  const t = await templateById(deps, s.template_id)
  const user = await scheduleCreator(deps.db, s.created_by)
  if (!t) return disable(deps, s, 'Not run: its template was deleted')
  if (!user || user.is_active !== 1) return disable(deps, s, 'Not run: its creator no longer exists or is disabled')
  if (!t.shared && t.owner_id !== s.created_by) return disable(deps, s, 'Not run: its template is no longer shared with its creator')
  try {
    const r = await runTemplate(deps, client, { userId: s.created_by, username: user.username }, t)
    await setLastRun(deps.db, s.id, now, r.jid, null)
    await event(deps, s, 'job.schedule_fired', `Schedule ${s.name} ran ${t.fun} on ${r.minions.length} minions`, { jid: r.jid, fun: t.fun, success: true })
  } catch (e) {
    // The creator's permissions are judged at firing time: without them the schedule stops until someone enables it again.
    if (e instanceof Forbidden) return disable(deps, s, `Not run: ${e.message}`)
    const msg = e instanceof Error ? e.message : String(e)
    await setLastRun(deps.db, s.id, now, null, msg)
    await event(deps, s, 'job.schedule_failed', `Schedule ${s.name} failed: ${msg}`, { fun: t.fun, success: false })
  }
}

/**
 * Fires every enabled schedule whose time has come, once each (see claimFiring); one too late (Saltdeck was down)
 * moves to its next time without running. Returns how many fired.
 */
export async function fireDueSchedules(deps: AppDeps, client: SaltClient): Promise<number> {
  const now = deps.clock.now()
  const due = await dueScheduleRows(deps.db, now)
  let fired = 0
  for (const s of due) {
    const dueAt = s.next_run_at!
    const next = nextFiring(s.cron, s.timezone, Math.max(now, dueAt))
    if (!(await claimFiring(deps, s.id, dueAt, next))) continue
    if (now - dueAt > MISSED_AFTER_MS) continue
    await fire(deps, client, s)
    fired++
  }
  // Claims older than a day are not needed to keep a firing once.
  await pruneFirings(deps.db, now - 86_400_000)
  return fired
}
