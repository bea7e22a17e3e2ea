/** Local user accounts and their role assignments. */
import { asc, eq } from 'drizzle-orm'
import { rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { AppDeps } from '../../deps'
import { roles, userRoles, users } from '../../db/schema'
import { Conflict, Forbidden, Invalid, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { endCredentials, endSessions, hashPassword, verifyPassword } from '../auth/service'
import { keepingFullAdmin, roleIdsOf } from '../roles/service'

type UserRow = typeof users.$inferSelect

/** The roles of a user as `{id, name}`, sorted by name. */
export function rolesOf(deps: AppDeps, userId: string) {
  return deps.db.select({ id: roles.id, name: roles.name }).from(userRoles).innerJoin(roles, eq(roles.id, userRoles.roleId))
    .where(eq(userRoles.userId, userId)).orderBy(asc(roles.nameKey)).all()
}

/** The public shape of a user: never the password hash. */
export function userOut(deps: AppDeps, u: UserRow) {
  return {
    id: u.id, username: u.username, display_name: u.displayName, must_change_pw: u.mustChangePw, is_active: u.isActive,
    is_builtin: u.isBuiltin, source: u.source, roles: rolesOf(deps, u.id), created_at: iso(u.createdAt), updated_at: iso(u.updatedAt),
  }
}

/** Reads a user or throws 404. */
export function getUser(deps: AppDeps, id: string): UserRow {
  const u = deps.db.select().from(users).where(eq(users.id, id)).get()
  if (!u) throw new NotFound('User')
  return u
}

/** Reads a user by name (case-insensitively), or undefined. */
export function userByName(deps: AppDeps, username: string): UserRow | undefined {
  return deps.db.select().from(users).where(eq(users.usernameKey, username.toLowerCase())).get()
}

/** The sentence of a password change refused for a directory user. */
export const DIRECTORY_PASSWORD = 'Password is managed by the directory'

/**
 * Creates or updates a directory user (no Saltdeck password) and replaces its roles with exactly `roleIds`, in one
 * transaction. The caller has checked that the name is not a user of another source.
 */
export function upsertDirectoryUser(deps: AppDeps, source: Exclude<UserRow['source'], 'local'>, username: string, displayName: string, roleIds: string[]): UserRow {
  const now = deps.clock.now()
  return deps.db.transaction((tx) => {
    let row = tx.select().from(users).where(eq(users.usernameKey, username.toLowerCase())).get()
    if (!row) {
      row = { id: newId(), username, usernameKey: username.toLowerCase(), displayName, passwordHash: '', mustChangePw: false, isActive: true, isBuiltin: false, source, createdAt: now, updatedAt: now }
      tx.insert(users).values(row).run()
    } else if (row.displayName !== displayName) {
      tx.update(users).set({ displayName, updatedAt: now }).where(eq(users.id, row.id)).run()
      row = { ...row, displayName, updatedAt: now }
    }
    const held = tx.select({ roleId: userRoles.roleId }).from(userRoles).where(eq(userRoles.userId, row.id)).all().map((r) => r.roleId).sort()
    // Rewritten only when they differ: every write to user_roles drops every cached principal (auth_version).
    if (held.join() !== [...roleIds].sort().join()) {
      tx.delete(userRoles).where(eq(userRoles.userId, row.id)).run()
      for (const roleId of roleIds) tx.insert(userRoles).values({ userId: row.id, roleId }).run()
    }
    return row
  })
}

/** Lists users sorted by username. */
export function listUsers(deps: AppDeps) {
  const rows = deps.db.select().from(users).orderBy(asc(users.usernameKey)).all()
  return { total: rows.length, users: rows.map((u) => userOut(deps, u)) }
}

/** Role references (ids or names, any case) as distinct role ids; an unknown one is refused by its place in `field`. */
function roleIdsFor(deps: AppDeps, refs: string[], field: string): string[] {
  const ids = roleIdsOf(deps, refs)
  const bad = refs.flatMap((r, i) => (ids[i] === null ? [{ field: [field, i], sentence: 'unknown role', value: r }] : []))
  if (bad.length) throw new Invalid(bad)
  return [...new Set(ids as string[])]
}

/** Input of user creation. */
export interface NewUser {
  username: string
  password: string
  display_name?: string
  must_change_pw?: boolean
  is_active?: boolean
  roles?: string[]
}

/** Creates a user; usernames are unique case-insensitively. */
export async function createUser(deps: AppDeps, input: NewUser) {
  const key = input.username.toLowerCase()
  if (deps.db.select({ id: users.id }).from(users).where(eq(users.usernameKey, key)).get()) throw new Conflict('Username already exists')
  const roleIds = roleIdsFor(deps, input.roles ?? [], 'roles')
  return userOut(deps, await insertUser(deps, input, roleIds, false))
}

/** Whether the built-in admin still has to change its first password. */
export const adminMustChangePassword = (deps: AppDeps) =>
  !!deps.db.select({ m: users.mustChangePw }).from(users).where(eq(users.isBuiltin, true)).get()?.m

/** Whether any user exists. */
export const hasUsers = (deps: AppDeps) => !!deps.db.select({ id: users.id }).from(users).limit(1).get()

/** Inserts a user row with its roles (the caller has checked the name and the role ids). */
export async function insertUser(deps: AppDeps, input: NewUser, roleIds: string[], builtin: boolean): Promise<UserRow> {
  const now = deps.clock.now()
  const row: UserRow = {
    id: newId(), username: input.username, usernameKey: input.username.toLowerCase(), displayName: input.display_name ?? '',
    passwordHash: await hashPassword(deps, input.password), mustChangePw: input.must_change_pw ?? true, isActive: input.is_active ?? true,
    isBuiltin: builtin, source: 'local', createdAt: now, updatedAt: now,
  }
  deps.db.transaction((tx) => {
    tx.insert(users).values(row).run()
    for (const roleId of roleIds) tx.insert(userRoles).values({ userId: row.id, roleId }).run()
  })
  return row
}

/** Replaces a user's roles (given by id or by name). */
export function setRoles(deps: AppDeps, userId: string, roleRefs: string[], field = 'role_ids') {
  getUser(deps, userId)
  const ids = roleIdsFor(deps, roleRefs, field)
  keepingFullAdmin(deps, () => {
    deps.db.delete(userRoles).where(eq(userRoles.userId, userId)).run()
    for (const roleId of ids) deps.db.insert(userRoles).values({ userId, roleId }).run()
  })
}

/** Changes display name, active flag and roles. */
export function updateUser(deps: AppDeps, id: string, patch: { display_name?: string | null; is_active?: boolean | null; roles?: string[] | null }, actorId: string) {
  const u = getUser(deps, id)
  if (patch.is_active === false && (u.id === actorId || u.isBuiltin)) throw new Conflict(u.isBuiltin ? 'Cannot deactivate a built-in user' : 'Cannot deactivate yourself')
  const set: Partial<UserRow> = { updatedAt: deps.clock.now() }
  if (patch.display_name != null) set.displayName = patch.display_name
  if (patch.is_active != null) set.isActive = patch.is_active
  // Roles and the active flag change together or not at all.
  keepingFullAdmin(deps, () => {
    if (patch.roles != null) setRoles(deps, id, patch.roles, 'roles')
    deps.db.update(users).set(set).where(eq(users.id, id)).run()
  })
  if (patch.is_active === false) endSessions(deps, id)
  return userOut(deps, getUser(deps, id))
}

/** Deletes a user; not yourself, not a built-in user. */
export function deleteUser(deps: AppDeps, id: string, actorId: string) {
  const u = getUser(deps, id)
  if (u.id === actorId) throw new Conflict('Cannot delete yourself')
  if (u.isBuiltin) throw new Conflict('Cannot delete a built-in user')
  keepingFullAdmin(deps, () => deps.db.delete(users).where(eq(users.id, id)).run())
  return u
}

/** Sets a user's password (by an admin or `saltdeck user reset-password`) and ends every session and API token of the user. */
export async function setPassword(deps: AppDeps, id: string, password: string, mustChange: boolean) {
  if (getUser(deps, id).source !== 'local') throw new Conflict(DIRECTORY_PASSWORD)
  await writePassword(deps, id, password, mustChange)
  // A reset is for a password that may be known to someone else: every credential of the user ends, API tokens too.
  endCredentials(deps, id)
}

/** Changes a user's own password after checking the current one; ends the user's other sessions and every API token. */
export async function changeOwnPassword(deps: AppDeps, userId: string, sessionId: string, current: string, next: string) {
  const u = getUser(deps, userId)
  if (u.source !== 'local') throw new Conflict(DIRECTORY_PASSWORD)
  if (!(await verifyPassword(deps, current, u.passwordHash))) throw new Forbidden('Current password is incorrect')
  await writePassword(deps, userId, next, false)
  // A token minted from a stolen session must not outlive the password that session was opened with.
  endCredentials(deps, userId, sessionId)
  // The first admin's generated password is no secret worth keeping on disk once it no longer opens anything.
  if (u.isBuiltin) forgetInitialPassword(deps.config.dataDir)
}

/** Where the first start writes the first admin's generated password. */
export const initialPasswordFile = (dataDir: string) => join(resolve(dataDir), 'initial-admin-password')

/** Removes the first admin's generated password from the data directory, if it is there. */
export function forgetInitialPassword(dataDir: string) {
  rmSync(initialPasswordFile(dataDir), { force: true })
}

/** The one writer of a user's password and its must-change flag. */
async function writePassword(deps: AppDeps, id: string, password: string, mustChange: boolean) {
  const hash = await hashPassword(deps, password)
  deps.db.update(users).set({ passwordHash: hash, mustChangePw: mustChange, updatedAt: deps.clock.now() }).where(eq(users.id, id)).run()
}

