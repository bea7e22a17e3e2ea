/** Job templates (contract §16): who sees and who may change a template; the SQL is in store.ts. */
import type { AppDeps } from '../../deps'
import { Conflict, Forbidden, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { deleteTemplateRow, insertTemplate, templateNameTaken, templateRow, updateTemplateRow, visibleTemplateRows, type TemplateRow, type TemplateWrite } from './store'
import { firstScheduleOf } from './schedule-store'

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

/** Who asks: the user, and whether it may change shared templates it does not own (`manage template:*`). */
export interface Caller {
  userId: string
  manageAll: boolean
}

const out = (r: TemplateRow) => ({
  id: r.id, name: r.name, description: r.description, tgt: r.tgt, tgt_type: r.tgt_type, fun: r.fun,
  arg: JSON.parse(r.arg) as unknown[], kwarg: JSON.parse(r.kwarg) as Record<string, unknown>, batch: r.batch, shared: r.shared === 1,
  owner: r.owner, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})
/** A template as answered. */
export type TemplateOut = ReturnType<typeof out>

/** The stored form of a caller's fields. */
const write = (f: TemplateFields): TemplateWrite => ({
  name: f.name, name_key: f.name.toLowerCase(), description: f.description, tgt: f.tgt, tgt_type: f.tgt_type, fun: f.fun,
  arg: JSON.stringify(f.arg), kwarg: JSON.stringify(f.kwarg), batch: f.batch, shared: f.shared ? 1 : 0,
})

/** The row of a template the caller may see (its own, or a shared one); NotFound otherwise, so a private one is not revealed. */
async function visibleRow(deps: AppDeps, id: string, userId: string): Promise<TemplateRow> {
  const r = await templateRow(deps.db, id)
  if (!r || (r.shared !== 1 && r.owner_id !== userId)) throw new NotFound('Template')
  return r
}

/** The templates a user sees: its own and the shared ones, by name. */
export const listTemplates = async (deps: AppDeps, userId: string) => ({ templates: (await visibleTemplateRows(deps.db, userId)).map(out) })

/** One template the user sees. */
export const getTemplate = async (deps: AppDeps, id: string, userId: string) => out(await visibleRow(deps, id, userId))

/** A template by id whoever owns it, for a schedule firing as its creator; null when it is gone. */
export async function templateById(deps: AppDeps, id: string): Promise<(TemplateOut & { owner_id: string }) | null> {
  const r = await templateRow(deps.db, id)
  return r ? { ...out(r), owner_id: r.owner_id } : null
}

/** A template's row the caller may change: its own, or a shared one with `manage template:*`. */
async function changeableRow(deps: AppDeps, id: string, c: Caller): Promise<TemplateRow> {
  const r = await visibleRow(deps, id, c.userId)
  if (r.owner_id !== c.userId && !c.manageAll) throw new Forbidden()
  return r
}

const nameTaken = (deps: AppDeps, name: string, except: string | null) => templateNameTaken(deps.db, name.toLowerCase(), except ?? '')

/** Creates a template owned by the user; Conflict when the name is taken (in any case). */
export async function createTemplate(deps: AppDeps, userId: string, f: TemplateFields) {
  if (await nameTaken(deps, f.name, null)) throw new Conflict('Template name already exists')
  const id = newId()
  await insertTemplate(deps.db, id, userId, write(f), deps.clock.now())
  return getTemplate(deps, id, userId)
}

/** Changes the fields given; Forbidden unless the caller owns it or manages templates, Conflict on a taken name. */
export async function updateTemplate(deps: AppDeps, id: string, c: Caller, p: Partial<TemplateFields>) {
  const r = await changeableRow(deps, id, c)
  if (p.name !== undefined && (await nameTaken(deps, p.name, id))) throw new Conflict('Template name already exists')
  await updateTemplateRow(deps.db, id, write({ ...out(r), ...p }), deps.clock.now())
  return out((await templateRow(deps.db, id))!)
}

/** Deletes a template no schedule uses; the same rule as changing it. Returns its name for the audit. */
export async function deleteTemplate(deps: AppDeps, id: string, c: Caller): Promise<string> {
  const r = await changeableRow(deps, id, c)
  const used = await firstScheduleOf(deps.db, id)
  if (used) throw new Conflict(`Template is used by schedule ${used.name}`)
  await deleteTemplateRow(deps.db, id)
  return r.name
}
