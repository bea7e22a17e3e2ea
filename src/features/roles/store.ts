/** SQL of the roles feature: roles, their grants, and who holds full administrative access. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { rolePermissions, roles, userRoles, users } from '../../db/schema'

/** A stored role. */
export type RoleRow = Row<typeof roles>
/** A stored grant of a role. */
export type GrantRow = Row<typeof rolePermissions>
/** A grant as the permission checks read it: verb and resource glob. */
export type GrantPair = Pick<GrantRow, 'verb' | 'resource_glob'>
/** A grant with the minions it is scoped to. */
export type ScopedGrantRow = Pick<GrantRow, 'verb' | 'resource_glob' | 'target_glob'>

/** One role by id, or undefined. */
export const roleById = (q: Queryable, id: string) => q.row<RoleRow>(sql`SELECT * FROM ${roles} WHERE ${roles.id} = ${id}`)

/** One role by its lower-cased name, or undefined. */
export const roleByKey = (q: Queryable, key: string) => q.row<RoleRow>(sql`SELECT * FROM ${roles} WHERE ${roles.nameKey} = ${key}`)

/** Every role, by name. */
export const allRoles = (q: Queryable) => q.rows<RoleRow>(sql`SELECT * FROM ${roles} ORDER BY ${roles.nameKey}, ${roles.name}`)

/** Every role's id and lower-cased name (to resolve references by id or name). */
export const roleKeys = (q: Queryable) => q.rows<Pick<RoleRow, 'id' | 'name_key'>>(sql`SELECT ${roles.id}, ${roles.nameKey} FROM ${roles}`)

/** The ids among `ids` that name a role. */
export async function existingRoleIds(q: Queryable, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  return (await q.rows<Pick<RoleRow, 'id'>>(sql`SELECT ${roles.id} FROM ${roles} WHERE ${roles.id} IN ${ids}`)).map((r) => r.id)
}

/** Stores a new role. */
export async function insertRole(q: Queryable, r: RoleRow) {
  await q.exec(sql`INSERT INTO ${roles} (id, name, name_key, description, is_builtin, created_at)
    VALUES (${r.id}, ${r.name}, ${r.name_key}, ${r.description}, ${r.is_builtin}, ${r.created_at})`)
}

/** Marks a role built-in (a custom role that took a built-in role's name before that role existed). */
export const markBuiltin = (q: Queryable, id: string) => q.exec(sql`UPDATE ${roles} SET is_builtin = 1 WHERE ${roles.id} = ${id}`)

/** Changes a role's description. */
export const setDescription = (q: Queryable, id: string, description: string) =>
  q.exec(sql`UPDATE ${roles} SET description = ${description} WHERE ${roles.id} = ${id}`)

/** Deletes a role; its assignments, grants and mappings go with it through the foreign keys. */
export const deleteRoleRow = (q: Queryable, id: string) => q.exec(sql`DELETE FROM ${roles} WHERE ${roles.id} = ${id}`)

/** A role's grants, by verb, resource glob and target glob. */
export const grantsOfRole = (q: Queryable, roleId: string) =>
  q.rows<GrantRow>(sql`SELECT * FROM ${rolePermissions} WHERE ${rolePermissions.roleId} = ${roleId}
    ORDER BY ${rolePermissions.verb}, ${rolePermissions.resourceGlob}, ${rolePermissions.targetGlob}`)

/** Whether a role already holds exactly this grant. */
export async function grantExists(q: Queryable, g: Omit<GrantRow, 'id'>): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS x FROM ${rolePermissions} WHERE ${rolePermissions.roleId} = ${g.role_id} AND ${rolePermissions.verb} = ${g.verb}
    AND ${rolePermissions.resourceGlob} = ${g.resource_glob} AND ${rolePermissions.targetGlob} = ${g.target_glob}`))
}

/** Stores a grant; one that exists already is left as it is. */
export async function insertGrant(q: Queryable, g: GrantRow) {
  await q.exec(sql`INSERT INTO ${rolePermissions} (id, role_id, verb, resource_glob, target_glob)
    VALUES (${g.id}, ${g.role_id}, ${g.verb}, ${g.resource_glob}, ${g.target_glob}) ON CONFLICT DO NOTHING`)
}

/** Deletes one grant of a role; resolves to the rows deleted (0 or 1). */
export const deleteGrant = (q: Queryable, roleId: string, id: string) =>
  q.exec(sql`DELETE FROM ${rolePermissions} WHERE ${rolePermissions.roleId} = ${roleId} AND ${rolePermissions.id} = ${id}`)

/** A user's grants (the union over its roles) with their targets, sorted, without duplicates. */
export const scopedGrantsOfUser = (q: Queryable, userId: string) =>
  q.rows<ScopedGrantRow>(sql`SELECT DISTINCT ${rolePermissions.verb}, ${rolePermissions.resourceGlob}, ${rolePermissions.targetGlob}
    FROM ${userRoles} JOIN ${rolePermissions} ON ${rolePermissions.roleId} = ${userRoles.roleId} WHERE ${userRoles.userId} = ${userId}
    ORDER BY ${rolePermissions.verb}, ${rolePermissions.resourceGlob}, ${rolePermissions.targetGlob}`)

/** A user's grants (the union over its roles) as verb and resource glob, sorted, without duplicates. */
export const grantsOfUser = (q: Queryable, userId: string) =>
  q.rows<GrantPair>(sql`SELECT DISTINCT ${rolePermissions.verb}, ${rolePermissions.resourceGlob}
    FROM ${userRoles} JOIN ${rolePermissions} ON ${rolePermissions.roleId} = ${userRoles.roleId} WHERE ${userRoles.userId} = ${userId}
    ORDER BY ${rolePermissions.verb}, ${rolePermissions.resourceGlob}`)

/** How many active users hold the full grant (*, * on *). */
export async function fullAdminCount(q: Queryable): Promise<number> {
  const r = await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${users} WHERE ${users.isActive} = 1 AND EXISTS (
    SELECT 1 FROM ${userRoles} JOIN ${rolePermissions} ON ${rolePermissions.roleId} = ${userRoles.roleId}
    WHERE ${userRoles.userId} = ${users.id} AND ${rolePermissions.verb} = '*' AND ${rolePermissions.resourceGlob} = '*' AND ${rolePermissions.targetGlob} = '*')`)
  return r?.n ?? 0
}
