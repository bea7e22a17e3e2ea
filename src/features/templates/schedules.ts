/**
 * Schedules (contract §16): a template fired on a cron in an IANA time zone, as the user who created the schedule with
 * the permissions it holds at firing time. The SQL of `schedules` and `schedule_firings`. Each firing is claimed by
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
import { getTemplate, templateById } from './store'

/** How late a firing may still happen; later, Saltdeck was down (or stalled) at its time and it is skipped. */
export const MISSED_AFTER_MS = 120_000

interface Row {
  id: string
  name: string
  template_id: string
  template_name: string | null
  cron: string
  timezone: string
  enabled: number
  next_run_at: number | null
  last_run_at: number | null
  last_jid: string | null
  last_error: string | null
  created_by: string
  creator: string | null
  created_at: number
  updated_at: number
}

const SELECT = 'SELECT s.*, t.name AS template_name, u.username AS creator FROM schedules s LEFT JOIN job_templates t ON t.id = s.template_id LEFT JOIN users u ON u.id = s.created_by'

const out = (r: Row) => ({
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

function row(deps: AppDeps, id: string): Row {
  const r = deps.db.$client.query<Row, [string]>(`${SELECT} WHERE s.id = ?1`).get(id)
  if (!r) throw new NotFound('Schedule')
  return r
}

/** Every schedule, by name. */
export const listSchedules = (deps: AppDeps) => ({ schedules: deps.db.$client.query<Row, []>(`${SELECT} ORDER BY s.name_key, s.id`).all().map(out) })
/** One schedule. */
export const getSchedule = (deps: AppDeps, id: string) => out(row(deps, id))

/** Who may change a schedule: its creator, or a holder of `manage template:*`. */
export interface ScheduleCaller {
  userId: string
  manageAll: boolean
}

const nameTaken = (deps: AppDeps, name: string, except: string) =>
  !!deps.db.$client.query<{ id: string }, [string, string]>('SELECT id FROM schedules WHERE name_key = ?1 AND id != ?2').get(name.toLowerCase(), except)

/** The fields a schedule is made of. */
export interface ScheduleFields {
  name: string
  template_id: string
  cron: string
  timezone: string
  enabled: boolean
}

/** Creates a schedule of a template the user sees (NotFound otherwise), firing as that user. */
export function createSchedule(deps: AppDeps, userId: string, f: ScheduleFields) {
  getTemplate(deps, f.template_id, userId)
  if (nameTaken(deps, f.name, '')) throw new Conflict('Schedule name already exists')
  const id = newId()
  const now = deps.clock.now()
  deps.db.$client
    .query('INSERT INTO schedules (id, name, name_key, template_id, cron, timezone, enabled, next_run_at, created_by, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)')
    .run(id, f.name, f.name.toLowerCase(), f.template_id, f.cron, f.timezone, f.enabled ? 1 : 0, f.enabled ? nextFiring(f.cron, f.timezone, now) : null, userId, now)
  return getSchedule(deps, id)
}

/** Changes a schedule (its creator, or `manage template:*`); the next run is computed again from now. */
export function updateSchedule(deps: AppDeps, id: string, c: ScheduleCaller, p: Partial<ScheduleFields>) {
  const r = row(deps, id)
  if (r.created_by !== c.userId && !c.manageAll) throw new Forbidden()
  if (p.template_id !== undefined) getTemplate(deps, p.template_id, c.userId)
  if (p.name !== undefined && nameTaken(deps, p.name, id)) throw new Conflict('Schedule name already exists')
  const m = { name: r.name, template_id: r.template_id, cron: r.cron, timezone: r.timezone, enabled: r.enabled === 1, ...p }
  const now = deps.clock.now()
  // Enabling again clears the reason it was disabled: the operator has seen it.
  const lastError = m.enabled && r.enabled !== 1 ? null : r.last_error
  deps.db.$client
    .query('UPDATE schedules SET name = ?2, name_key = ?3, template_id = ?4, cron = ?5, timezone = ?6, enabled = ?7, next_run_at = ?8, last_error = ?9, updated_at = ?10 WHERE id = ?1')
    .run(id, m.name, m.name.toLowerCase(), m.template_id, m.cron, m.timezone, m.enabled ? 1 : 0, m.enabled ? nextFiring(m.cron, m.timezone, now) : null, lastError, now)
  return getSchedule(deps, id)
}

/** Deletes a schedule (its creator, or `manage template:*`); returns its name. */
export function deleteSchedule(deps: AppDeps, id: string, c: ScheduleCaller): string {
  const r = row(deps, id)
  if (r.created_by !== c.userId && !c.manageAll) throw new Forbidden()
  deps.db.$client.transaction(() => {
    deps.db.$client.query('DELETE FROM schedule_firings WHERE schedule_id = ?1').run(id)
    deps.db.$client.query('DELETE FROM schedules WHERE id = ?1').run(id)
  })()
  return r.name
}

/**
 * Claims one firing: inserts its (schedule, due time) row and moves the schedule to its next time, in one
 * transaction. False when another instance (or this one before a restart) already claimed it.
 */
export function claimFiring(deps: AppDeps, id: string, dueAt: number, next: number | null): boolean {
  const db = deps.db.$client
  return db.transaction(() => {
    const claimed = db.query('INSERT OR IGNORE INTO schedule_firings (schedule_id, due_at, claimed_at) VALUES (?1, ?2, ?3)').run(id, dueAt, deps.clock.now()).changes === 1
    if (claimed) db.query('UPDATE schedules SET next_run_at = ?2 WHERE id = ?1 AND next_run_at = ?3').run(id, next, dueAt)
    return claimed
  })()
}

/** Stores the events of a firing and tells the live streams. */
async function event(deps: AppDeps, s: Row, type: string, summary: string, extra: { jid?: string; fun?: string; success: boolean }) {
  publishActivity(deps, await recordEvents(deps, [{ ts: deps.clock.now(), category: 'job', event_type: type, initiator: s.creator, target: s.name, summary, ...extra }]))
}

/** Turns a schedule off with the reason, as when its creator lost the permission. */
async function disable(deps: AppDeps, s: Row, reason: string) {
  deps.db.$client.query('UPDATE schedules SET enabled = 0, next_run_at = NULL, last_error = ?2, updated_at = ?3 WHERE id = ?1').run(s.id, reason, deps.clock.now())
  await event(deps, s, 'job.schedule_disabled', `Schedule ${s.name} disabled: ${reason}`, { success: false })
}

/** Fires one claimed schedule as its creator; records the outcome on the schedule and as an activity event. */
async function fire(deps: AppDeps, client: SaltClient, s: Row) {
  const now = deps.clock.now()
  const t = templateById(deps, s.template_id)
  const user = deps.db.$client.query<{ username: string; is_active: number }, [string]>('SELECT username, is_active FROM users WHERE id = ?1').get(s.created_by)
  if (!t) return disable(deps, s, 'Not run: its template was deleted')
  if (!user || user.is_active !== 1) return disable(deps, s, 'Not run: its creator no longer exists or is disabled')
  if (!t.shared && t.owner_id !== s.created_by) return disable(deps, s, 'Not run: its template is no longer shared with its creator')
  try {
    const r = await runTemplate(deps, client, { userId: s.created_by, username: user.username }, t)
    deps.db.$client.query('UPDATE schedules SET last_run_at = ?2, last_jid = ?3, last_error = NULL WHERE id = ?1').run(s.id, now, r.jid)
    await event(deps, s, 'job.schedule_fired', `Schedule ${s.name} ran ${t.fun} on ${r.minions.length} minions`, { jid: r.jid, fun: t.fun, success: true })
  } catch (e) {
    // The creator's permissions are judged at firing time: without them the schedule stops until someone enables it again.
    if (e instanceof Forbidden) return disable(deps, s, `Not run: ${e.message}`)
    const msg = e instanceof Error ? e.message : String(e)
    deps.db.$client.query('UPDATE schedules SET last_run_at = ?2, last_jid = NULL, last_error = ?3 WHERE id = ?1').run(s.id, now, msg)
    await event(deps, s, 'job.schedule_failed', `Schedule ${s.name} failed: ${msg}`, { fun: t.fun, success: false })
  }
}

/**
 * Fires every enabled schedule whose time has come, once each (see claimFiring); one too late (Saltdeck was down)
 * moves to its next time without running. Returns how many fired.
 */
export async function fireDueSchedules(deps: AppDeps, client: SaltClient): Promise<number> {
  const now = deps.clock.now()
  const due = deps.db.$client.query<Row, [number]>(`${SELECT} WHERE s.enabled = 1 AND s.next_run_at <= ?1 ORDER BY s.next_run_at, s.id`).all(now)
  let fired = 0
  for (const s of due) {
    const dueAt = s.next_run_at!
    const next = nextFiring(s.cron, s.timezone, Math.max(now, dueAt))
    if (!claimFiring(deps, s.id, dueAt, next)) continue
    if (now - dueAt > MISSED_AFTER_MS) continue
    await fire(deps, client, s)
    fired++
  }
  // Claims older than a day are not needed to keep a firing once.
  deps.db.$client.query('DELETE FROM schedule_firings WHERE due_at < ?1').run(now - 86_400_000)
  return fired
}
