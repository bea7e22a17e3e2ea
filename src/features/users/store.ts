/** SQL of the users feature: user accounts and the roles they hold. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { roles, userRoles, users } from '../../db/schema'

/** A stored user (its password hash included: never answered). */
export type UserRow = Row<typeof users>
/** A role as a user's list of roles shows it. */
export type HeldRole = Pick<Row<typeof roles>, 'id' | 'name'>

/** One user by id, or undefined. */
export const userById = (q: Queryable, id: string) => q.row<UserRow>(sql`SELECT * FROM ${users} WHERE ${users.id} = ${id}`)

/** One user by its lower-cased name, or undefined. */
export const userByKey = (q: Queryable, key: string) => q.row<UserRow>(sql`SELECT * FROM ${users} WHERE ${users.usernameKey} = ${key}`)

/** Every user, by name. */
export const allUsers = (q: Queryable) => q.rows<UserRow>(sql`SELECT * FROM ${users} ORDER BY ${users.usernameKey}`)

/** The roles of a user, by name. */
export const rolesOfUser = (q: Queryable, userId: string) =>
  q.rows<HeldRole>(sql`SELECT ${roles.id}, ${roles.name} FROM ${userRoles} JOIN ${roles} ON ${roles.id} = ${userRoles.roleId}
    WHERE ${userRoles.userId} = ${userId} ORDER BY ${roles.nameKey}`)

/** The roles of each of these users, by name (one statement for a whole list). */
export async function rolesOfUsers(q: Queryable, userIds: string[]): Promise<Map<string, HeldRole[]>> {
  const out = new Map<string, HeldRole[]>(userIds.map((id) => [id, []]))
  if (!userIds.length) return out
  const rows = await q.rows<HeldRole & Pick<Row<typeof userRoles>, 'user_id'>>(sql`SELECT ${userRoles.userId}, ${roles.id}, ${roles.name}
    FROM ${userRoles} JOIN ${roles} ON ${roles.id} = ${userRoles.roleId} WHERE ${userRoles.userId} IN ${userIds} ORDER BY ${roles.nameKey}`)
  for (const r of rows) out.get(r.user_id)?.push({ id: r.id, name: r.name })
  return out
}

/** The role ids a user holds. */
export async function roleIdsOfUser(q: Queryable, userId: string): Promise<string[]> {
  return (await q.rows<Pick<Row<typeof userRoles>, 'role_id'>>(sql`SELECT ${userRoles.roleId} FROM ${userRoles} WHERE ${userRoles.userId} = ${userId}`)).map((r) => r.role_id)
}

/** Whether the built-in admin still has to change its first password. */
export async function builtinMustChange(q: Queryable): Promise<boolean> {
  return (await q.row<Pick<UserRow, 'must_change_pw'>>(sql`SELECT ${users.mustChangePw} FROM ${users} WHERE ${users.isBuiltin} = 1`))?.must_change_pw === 1
}

/** Whether any user exists. */
export async function anyUser(q: Queryable): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS x FROM ${users} LIMIT 1`))
}

/** Stores a new user. */
export async function insertUserRow(q: Queryable, u: UserRow) {
  await q.exec(sql`INSERT INTO ${users} (id, username, username_key, display_name, password_hash, must_change_pw, is_active, is_builtin, source, created_at, updated_at)
    VALUES (${u.id}, ${u.username}, ${u.username_key}, ${u.display_name}, ${u.password_hash}, ${u.must_change_pw}, ${u.is_active}, ${u.is_builtin}, ${u.source}, ${u.created_at}, ${u.updated_at})`)
}

/** Changes a user's display name and/or active flag (what is given), and its updated_at. */
export async function updateUserRow(q: Queryable, id: string, set: Partial<Pick<UserRow, 'display_name' | 'is_active'>> & Pick<UserRow, 'updated_at'>) {
  const parts = [sql`updated_at = ${set.updated_at}`]
  if (set.display_name !== undefined) parts.push(sql`display_name = ${set.display_name}`)
  if (set.is_active !== undefined) parts.push(sql`is_active = ${set.is_active}`)
  await q.exec(sql`UPDATE ${users} SET ${sql.join(parts, sql`, `)} WHERE ${users.id} = ${id}`)
}

/** Sets a user's password hash and whether it must be changed at the next login. */
export const updatePassword = (q: Queryable, id: string, hash: string, mustChange: boolean, now: number) =>
  q.exec(sql`UPDATE ${users} SET password_hash = ${hash}, must_change_pw = ${mustChange ? 1 : 0}, updated_at = ${now} WHERE ${users.id} = ${id}`)

/** Deletes a user; its roles, sessions and tokens go with it through the foreign keys. */
export const deleteUserRow = (q: Queryable, id: string) => q.exec(sql`DELETE FROM ${users} WHERE ${users.id} = ${id}`)

/** Replaces a user's roles with exactly `roleIds`. */
export async function replaceRoles(q: Queryable, userId: string, roleIds: string[]) {
  await q.exec(sql`DELETE FROM ${userRoles} WHERE ${userRoles.userId} = ${userId}`)
  await addRoles(q, userId, roleIds)
}

/** Gives a user these roles (one statement). */
export async function addRoles(q: Queryable, userId: string, roleIds: string[]) {
  if (!roleIds.length) return
  await q.exec(sql`INSERT INTO ${userRoles} (user_id, role_id) VALUES ${sql.join(roleIds.map((r) => sql`(${userId}, ${r})`), sql`, `)}`)
}
