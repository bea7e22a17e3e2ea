/** Local user accounts and their role assignments. */
import { rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { AppDeps } from '../../deps'
import { Conflict, Forbidden, Invalid, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { endCredentials, endSessions, hashPassword, verifyPassword } from '../auth/service'
import { keepingFullAdmin, roleIdsOf } from '../roles/service'
import {
  addRoles, allUsers, anyUser, builtinMustChange, deleteUserRow, insertUserRow, replaceRoles, roleIdsOfUser, rolesOfUser, rolesOfUsers, updatePassword,
  updateUserRow, userById, userByKey, type HeldRole, type UserRow,
} from './store'

/** The roles of a user as `{id, name}`, sorted by name. */
export const rolesOf = (deps: AppDeps, userId: string) => rolesOfUser(deps.db, userId)

/** The public shape of a user with the roles it holds: never the password hash. */
function userWith(u: UserRow, roles: HeldRole[]) {
  return {
    id: u.id, username: u.username, display_name: u.display_name, must_change_pw: u.must_change_pw === 1, is_active: u.is_active === 1,
    is_builtin: u.is_builtin === 1, source: u.source, roles, created_at: iso(u.created_at), updated_at: iso(u.updated_at),
  }
}

/** The public shape of a user: never the password hash. */
export async function userOut(deps: AppDeps, u: UserRow) {
  return userWith(u, await rolesOf(deps, u.id))
}

/** Reads a user or throws 404. */
export async function getUser(deps: AppDeps, id: string): Promise<UserRow> {
  const u = await userById(deps.db, id)
  if (!u) throw new NotFound('User')
  return u
}

/** Reads a user by name (case-insensitively), or undefined. */
export const userByName = (deps: AppDeps, username: string): Promise<UserRow | undefined> => userByKey(deps.db, username.toLowerCase())

/** The sentence of a password change refused for a directory user. */
export const DIRECTORY_PASSWORD = 'Password is managed by the directory'

/**
 * Creates or updates a directory user (no Saltdeck password) and replaces its roles with exactly `roleIds`, in one
 * transaction. The caller has checked that the name is not a user of another source.
 */
export function upsertDirectoryUser(deps: AppDeps, source: Exclude<UserRow['source'], 'local'>, username: string, displayName: string, roleIds: string[]): Promise<UserRow> {
  const now = deps.clock.now()
  return deps.db.tx(async (tx) => {
    let row = await userByKey(tx, username.toLowerCase())
    if (!row) {
      row = {
        id: newId(), username, username_key: username.toLowerCase(), display_name: displayName, password_hash: '', must_change_pw: 0, is_active: 1, is_builtin: 0,
        source, created_at: now, updated_at: now,
      }
      await insertUserRow(tx, row)
    } else if (row.display_name !== displayName) {
      await updateUserRow(tx, row.id, { display_name: displayName, updated_at: now })
      row = { ...row, display_name: displayName, updated_at: now }
    }
    const held = (await roleIdsOfUser(tx, row.id)).sort()
    // Rewritten only when they differ: every write to user_roles drops every cached principal (auth_version).
    if (held.join() !== [...roleIds].sort().join()) await replaceRoles(tx, row.id, roleIds)
    return row
  })
}

/** Lists users sorted by username. */
export async function listUsers(deps: AppDeps) {
  const rows = await allUsers(deps.db)
  const roles = await rolesOfUsers(deps.db, rows.map((u) => u.id))
  return { total: rows.length, users: rows.map((u) => userWith(u, roles.get(u.id) ?? [])) }
}

/** Role references (ids or names, any case) as distinct role ids; an unknown one is refused by its place in `field`. */
async function roleIdsFor(deps: AppDeps, refs: string[], field: string): Promise<string[]> {
  const ids = await roleIdsOf(deps, refs)
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
  if (await userByKey(deps.db, input.username.toLowerCase())) throw new Conflict('Username already exists')
  const roleIds = await roleIdsFor(deps, input.roles ?? [], 'roles')
  return userOut(deps, await insertUser(deps, input, roleIds, false))
}

/** Whether the built-in admin still has to change its first password. */
export const adminMustChangePassword = (deps: AppDeps) => builtinMustChange(deps.db)

/** Whether any user exists. */
export const hasUsers = (deps: AppDeps) => anyUser(deps.db)

/** Inserts a user row with its roles (the caller has checked the name and the role ids). */
export async function insertUser(deps: AppDeps, input: NewUser, roleIds: string[], builtin: boolean): Promise<UserRow> {
  const now = deps.clock.now()
  const row: UserRow = {
    id: newId(), username: input.username, username_key: input.username.toLowerCase(), display_name: input.display_name ?? '',
    password_hash: await hashPassword(deps, input.password), must_change_pw: (input.must_change_pw ?? true) ? 1 : 0, is_active: (input.is_active ?? true) ? 1 : 0,
    is_builtin: builtin ? 1 : 0, source: 'local', created_at: now, updated_at: now,
  }
  await deps.db.tx(async (tx) => {
    await insertUserRow(tx, row)
    await addRoles(tx, row.id, roleIds)
  })
  return row
}

/** Replaces a user's roles (given by id or by name). */
export async function setRoles(deps: AppDeps, userId: string, roleRefs: string[], field = 'role_ids') {
  await getUser(deps, userId)
  const ids = await roleIdsFor(deps, roleRefs, field)
  await keepingFullAdmin(deps, (tx) => replaceRoles(tx, userId, ids))
}

/** Changes display name, active flag and roles. */
export async function updateUser(deps: AppDeps, id: string, patch: { display_name?: string | null; is_active?: boolean | null; roles?: string[] | null }, actorId: string) {
  const u = await getUser(deps, id)
  if (patch.is_active === false && (u.id === actorId || u.is_builtin === 1)) throw new Conflict(u.is_builtin === 1 ? 'Cannot deactivate a built-in user' : 'Cannot deactivate yourself')
  const set: Parameters<typeof updateUserRow>[2] = { updated_at: deps.clock.now() }
  if (patch.display_name != null) set.display_name = patch.display_name
  if (patch.is_active != null) set.is_active = patch.is_active ? 1 : 0
  const roleIds = patch.roles != null ? await roleIdsFor(deps, patch.roles, 'roles') : null
  // Roles and the active flag change together or not at all.
  await keepingFullAdmin(deps, async (tx) => {
    if (roleIds) await replaceRoles(tx, id, roleIds)
    await updateUserRow(tx, id, set)
  })
  if (patch.is_active === false) await endSessions(deps, id)
  return userOut(deps, await getUser(deps, id))
}

/** Deletes a user; not yourself, not a built-in user. */
export async function deleteUser(deps: AppDeps, id: string, actorId: string) {
  const u = await getUser(deps, id)
  if (u.id === actorId) throw new Conflict('Cannot delete yourself')
  if (u.is_builtin === 1) throw new Conflict('Cannot delete a built-in user')
  await keepingFullAdmin(deps, (tx) => deleteUserRow(tx, id))
  return u
}

/** Sets a user's password (by an admin or `saltdeck user reset-password`) and ends every session and API token of the user. */
export async function setPassword(deps: AppDeps, id: string, password: string, mustChange: boolean) {
  if ((await getUser(deps, id)).source !== 'local') throw new Conflict(DIRECTORY_PASSWORD)
  await writePassword(deps, id, password, mustChange)
  // A reset is for a password that may be known to someone else: every credential of the user ends, API tokens too.
  await endCredentials(deps, id)
}

/** Changes a user's own password after checking the current one; ends the user's other sessions and every API token. */
export async function changeOwnPassword(deps: AppDeps, userId: string, sessionId: string, current: string, next: string) {
  const u = await getUser(deps, userId)
  if (u.source !== 'local') throw new Conflict(DIRECTORY_PASSWORD)
  if (!(await verifyPassword(deps, current, u.password_hash))) throw new Forbidden('Current password is incorrect')
  await writePassword(deps, userId, next, false)
  // A token minted from a stolen session must not outlive the password that session was opened with.
  await endCredentials(deps, userId, sessionId)
  // The first admin's generated password is no secret worth keeping on disk once it no longer opens anything.
  if (u.is_builtin === 1) forgetInitialPassword(deps.config.dataDir)
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
  await updatePassword(deps.db, id, hash, mustChange, deps.clock.now())
}

