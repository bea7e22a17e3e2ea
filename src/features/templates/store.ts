/** Job templates (contract §16): the SQL of `job_templates`; who sees and who may change a template. */
import type { AppDeps } from '../../deps'
import { Conflict, Forbidden, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'

/** A template's fields as a caller gives them. */
export interface TemplateFields {
  name: string
  description: string
  tgt: string
  tgt_type: string
  fun: string
  arg: unknown[]
  kwarg: Record<string, unknown>
  batch: string | null
  shared: boolean
}

interface Row {
  id: string
  name: string
  description: string
  tgt: string
  tgt_type: string
  fun: string
  arg: string
  kwarg: string
  batch: string | null
  shared: number
  owner_id: string
  owner: string | null
  created_at: number
  updated_at: number
}

/** Who asks: the user, and whether it may change shared templates it does not own (`manage template:*`). */
export interface Caller {
  userId: string
  manageAll: boolean
}

const SELECT = 'SELECT t.*, u.username AS owner FROM job_templates t LEFT JOIN users u ON u.id = t.owner_id'

const out = (r: Row) => ({
  id: r.id, name: r.name, description: r.description, tgt: r.tgt, tgt_type: r.tgt_type, fun: r.fun,
  arg: JSON.parse(r.arg) as unknown[], kwarg: JSON.parse(r.kwarg) as Record<string, unknown>, batch: r.batch, shared: r.shared === 1,
  owner: r.owner, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})
/** A template as answered. */
export type TemplateOut = ReturnType<typeof out>

/** The row of a template the caller may see (its own, or a shared one); NotFound otherwise, so a private one is not revealed. */
function visibleRow(deps: AppDeps, id: string, userId: string): Row {
  const r = deps.db.$client.query<Row, [string]>(`${SELECT} WHERE t.id = ?1`).get(id)
  if (!r || (r.shared !== 1 && r.owner_id !== userId)) throw new NotFound('Template')
  return r
}

/** The templates a user sees: its own and the shared ones, by name. */
export const listTemplates = (deps: AppDeps, userId: string) => ({
  templates: deps.db.$client.query<Row, [string]>(`${SELECT} WHERE t.shared = 1 OR t.owner_id = ?1 ORDER BY t.name_key, t.id`).all(userId).map(out),
})

/** One template the user sees. */
export const getTemplate = (deps: AppDeps, id: string, userId: string) => out(visibleRow(deps, id, userId))

/** A template by id whoever owns it, for a schedule firing as its creator; null when it is gone. */
export function templateById(deps: AppDeps, id: string): (TemplateOut & { owner_id: string }) | null {
  const r = deps.db.$client.query<Row, [string]>(`${SELECT} WHERE t.id = ?1`).get(id)
  return r ? { ...out(r), owner_id: r.owner_id } : null
}

/** A template's row the caller may change: its own, or a shared one with `manage template:*`. */
function changeableRow(deps: AppDeps, id: string, c: Caller): Row {
  const r = visibleRow(deps, id, c.userId)
  if (r.owner_id !== c.userId && !c.manageAll) throw new Forbidden()
  return r
}

const nameTaken = (deps: AppDeps, name: string, except: string | null) =>
  !!deps.db.$client.query<{ id: string }, [string, string]>('SELECT id FROM job_templates WHERE name_key = ?1 AND id != ?2').get(name.toLowerCase(), except ?? '')

/** Creates a template owned by the user; Conflict when the name is taken (in any case). */
export function createTemplate(deps: AppDeps, userId: string, f: TemplateFields) {
  if (nameTaken(deps, f.name, null)) throw new Conflict('Template name already exists')
  const id = newId()
  const now = deps.clock.now()
  deps.db.$client
    .query('INSERT INTO job_templates (id, name, name_key, description, tgt, tgt_type, fun, arg, kwarg, batch, shared, owner_id, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)')
    .run(id, f.name, f.name.toLowerCase(), f.description, f.tgt, f.tgt_type, f.fun, JSON.stringify(f.arg), JSON.stringify(f.kwarg), f.batch, f.shared ? 1 : 0, userId, now)
  return getTemplate(deps, id, userId)
}

/** Changes the fields given; Forbidden unless the caller owns it or manages templates, Conflict on a taken name. */
export function updateTemplate(deps: AppDeps, id: string, c: Caller, p: Partial<TemplateFields>) {
  const r = changeableRow(deps, id, c)
  if (p.name !== undefined && nameTaken(deps, p.name, id)) throw new Conflict('Template name already exists')
  const m = { ...out(r), ...p }
  deps.db.$client
    .query('UPDATE job_templates SET name = ?2, name_key = ?3, description = ?4, tgt = ?5, tgt_type = ?6, fun = ?7, arg = ?8, kwarg = ?9, batch = ?10, shared = ?11, updated_at = ?12 WHERE id = ?1')
    .run(id, m.name, m.name.toLowerCase(), m.description, m.tgt, m.tgt_type, m.fun, JSON.stringify(m.arg), JSON.stringify(m.kwarg), m.batch, m.shared ? 1 : 0, deps.clock.now())
  return out(deps.db.$client.query<Row, [string]>(`${SELECT} WHERE t.id = ?1`).get(id)!)
}

/** Deletes a template no schedule uses; the same rule as changing it. Returns its name for the audit. */
export function deleteTemplate(deps: AppDeps, id: string, c: Caller): string {
  const r = changeableRow(deps, id, c)
  const used = deps.db.$client.query<{ name: string }, [string]>('SELECT name FROM schedules WHERE template_id = ?1 ORDER BY name_key LIMIT 1').get(id)
  if (used) throw new Conflict(`Template is used by schedule ${used.name}`)
  deps.db.$client.query('DELETE FROM job_templates WHERE id = ?1').run(id)
  return r.name
}
