/** Job templates (contract §16): the SQL of `job_templates`. Who sees and who may change a template is in service.ts. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { jobTemplates, users } from '../../db/schema'

/** A template as stored, with its owner's username (null once that user is deleted). */
export type TemplateRow = Row<typeof jobTemplates> & { owner: string | null }

const SELECT = sql`SELECT ${jobTemplates}.*, ${users.username} AS owner FROM ${jobTemplates} LEFT JOIN ${users} ON ${users.id} = ${jobTemplates.ownerId}`

/** One template by id, whoever owns it. */
export const templateRow = (q: Queryable, id: string) => q.row<TemplateRow>(sql`${SELECT} WHERE ${jobTemplates.id} = ${id}`)

/** The templates a user sees (its own and the shared ones), by name. */
export const visibleTemplateRows = (q: Queryable, userId: string) =>
  q.rows<TemplateRow>(sql`${SELECT} WHERE ${jobTemplates.shared} = 1 OR ${jobTemplates.ownerId} = ${userId} ORDER BY ${jobTemplates.nameKey}, ${jobTemplates.id}`)

/** Whether another template (not `except`) has this name key. */
export async function templateNameTaken(q: Queryable, nameKey: string, except: string): Promise<boolean> {
  return !!(await q.row(sql`SELECT ${jobTemplates.id} FROM ${jobTemplates} WHERE ${jobTemplates.nameKey} = ${nameKey} AND ${jobTemplates.id} != ${except}`))
}

/** The fields of a template row a create or an update writes. */
export type TemplateWrite = Omit<Row<typeof jobTemplates>, 'id' | 'owner_id' | 'created_at' | 'updated_at'>

/** Stores a new template. */
export async function insertTemplate(q: Queryable, id: string, ownerId: string, f: TemplateWrite, now: number) {
  await q.exec(sql`INSERT INTO ${jobTemplates} (id, name, name_key, description, tgt, tgt_type, fun, arg, kwarg, batch, shared, owner_id, created_at, updated_at)
    VALUES (${id}, ${f.name}, ${f.name_key}, ${f.description}, ${f.tgt}, ${f.tgt_type}, ${f.fun}, ${f.arg}, ${f.kwarg}, ${f.batch}, ${f.shared}, ${ownerId}, ${now}, ${now})`)
}

/** Rewrites a template's fields. */
export async function updateTemplateRow(q: Queryable, id: string, f: TemplateWrite, now: number) {
  await q.exec(sql`UPDATE ${jobTemplates} SET name = ${f.name}, name_key = ${f.name_key}, description = ${f.description}, tgt = ${f.tgt},
    tgt_type = ${f.tgt_type}, fun = ${f.fun}, arg = ${f.arg}, kwarg = ${f.kwarg}, batch = ${f.batch}, shared = ${f.shared}, updated_at = ${now}
    WHERE ${jobTemplates.id} = ${id}`)
}

/** Deletes a template. */
export async function deleteTemplateRow(q: Queryable, id: string) {
  await q.exec(sql`DELETE FROM ${jobTemplates} WHERE ${jobTemplates.id} = ${id}`)
}
