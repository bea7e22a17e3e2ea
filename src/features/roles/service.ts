/** Roles, their grants, the built-in roles and permission matching. */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { Conflict, NotFound } from '../../lib/errors'
import { globMatch } from '../../lib/glob'
import { newId } from '../../lib/ids'
import { authChanged } from '../auth/changes'
import {
  allRoles, deleteGrant, deleteRoleRow, existingRoleIds, fullAdminCount, grantExists, grantsOfRole, insertGrant, insertRole, markBuiltin, roleById,
  roleByKey, roleKeys, scopedGrantsOfUser, setDescription, type GrantPair, type RoleRow, type ScopedGrantRow,
} from './store'

/** A (verb, resource_glob) pair. */
export type Grant = GrantPair

/** A grant with the minions it is scoped to: target_glob is salt's glob on minion ids (`*`: every minion). */
export type ScopedGrant = ScopedGrantRow

/** The built-in roles and their grants (contract §4); repaired at every start. */
export const BUILTIN_ROLES: Record<string, { description: string; grants: [string, string][] }> = {
  admin: { description: 'Full access', grants: [['*', '*']] },
  operator: {
    description: 'Runs jobs, manages keys and collects inventory',
    grants: [['view', '*'], ['run', '*'], ['accept', 'key:*'], ['reject', 'key:*'], ['delete', 'key:*'], ['execute', 'salt:*'], ['kill', 'job:*'], ['collect', 'inventory:*'], ['ack', 'alert:*']],
  },
  viewer: {
    description: 'Reads the fleet',
    grants: [['view', 'minion:*'], ['view', 'key:*'], ['view', 'job:*'], ['view', 'inventory:*'], ['view', 'event:*'], ['view', 'alert:*'], ['view', 'vuln:*']],
  },
}

/** True when any grant's globs match the verb and the resource. */
export function holds(grants: Grant[], verb: string, resource: string): boolean {
  return grants.some((g) => globMatch(g.verb, verb) && globMatch(g.resource_glob, resource))
}

/** Creates missing built-in roles and re-adds missing grants; returns the role ids by name. */
export async function ensureBuiltinRoles(deps: AppDeps): Promise<Record<string, string>> {
  const ids: Record<string, string> = {}
  await deps.db.tx(async (tx) => {
    for (const [name, spec] of Object.entries(BUILTIN_ROLES)) {
      let row = await roleByKey(tx, name)
      if (!row) {
        row = { id: newId(), name, name_key: name, description: spec.description, is_builtin: 1, created_at: deps.clock.now() }
        await insertRole(tx, row)
      } else if (row.is_builtin !== 1) await markBuiltin(tx, row.id)
      for (const [verb, resource_glob] of spec.grants) await insertGrant(tx, { id: newId(), role_id: row.id, verb, resource_glob, target_glob: '*' })
      ids[name] = row.id
    }
  })
  return ids
}

/** The public shape of a role. */
export const roleOut = (r: RoleRow) => ({ id: r.id, name: r.name, is_builtin: r.is_builtin === 1, description: r.description })

/** Reads a role or throws 404. */
export async function getRole(deps: AppDeps, id: string): Promise<RoleRow> {
  const r = await roleById(deps.db, id)
  if (!r) throw new NotFound('Role')
  return r
}

/** Lists every role sorted by name. */
export async function listRoles(deps: AppDeps) {
  const rows = await allRoles(deps.db)
  return { total: rows.length, roles: rows.map(roleOut) }
}

/** A role with its grants. */
export async function roleDetail(deps: AppDeps, id: string) {
  const r = await getRole(deps, id)
  const perms = await grantsOfRole(deps.db, id)
  return { ...roleOut(r), permissions: perms.map((p) => ({ id: p.id, verb: p.verb, resource_glob: p.resource_glob, target_glob: p.target_glob })) }
}

/** Creates a role; names are unique case-insensitively. */
export async function createRole(deps: AppDeps, name: string, description: string) {
  const key = name.toLowerCase()
  if (await roleByKey(deps.db, key)) throw new Conflict('Role name already exists')
  const row: RoleRow = { id: newId(), name, name_key: key, description, is_builtin: 0, created_at: deps.clock.now() }
  await insertRole(deps.db, row)
  return roleOut(row)
}

/** Changes a role's description (built-in roles included). */
export async function updateRole(deps: AppDeps, id: string, description: string | null | undefined) {
  const r = await getRole(deps, id)
  if (description != null) {
    await setDescription(deps.db, id, description)
    r.description = description
  }
  return roleOut(r)
}

/** Deletes a custom role and, through the foreign keys, its assignments and grants. */
export async function deleteRole(deps: AppDeps, id: string) {
  const r = await getRole(deps, id)
  if (r.is_builtin === 1) throw new Conflict('Cannot delete a built-in role')
  await keepingFullAdmin(deps, (tx) => deleteRoleRow(tx, id))
  return r
}

/** Adds a grant to a custom role; `targetGlob` scopes an execute grant to the minions it matches. */
export async function addPermission(deps: AppDeps, roleId: string, verb: string, resourceGlob: string, targetGlob = '*') {
  const r = await getRole(deps, roleId)
  if (r.is_builtin === 1) throw new Conflict("Cannot change a built-in role's permissions")
  const grant = { id: newId(), role_id: roleId, verb, resource_glob: resourceGlob, target_glob: targetGlob }
  if (await grantExists(deps.db, grant)) throw new Conflict('Permission already exists')
  await insertGrant(deps.db, grant)
  return { id: grant.id, verb, resource_glob: resourceGlob, target_glob: targetGlob }
}

/** A user's grants with their targets (the union over its roles), for the checks that look at minions. */
export const scopedGrantsOf = (deps: AppDeps, userId: string): Promise<ScopedGrant[]> => scopedGrantsOfUser(deps.db, userId)

/** Removes a grant from a custom role. */
export async function removePermission(deps: AppDeps, roleId: string, permId: string) {
  const r = await getRole(deps, roleId)
  if (r.is_builtin === 1) throw new Conflict("Cannot change a built-in role's permissions")
  const changed = await keepingFullAdmin(deps, (tx) => deleteGrant(tx, roleId, permId))
  if (changed === 0) throw new NotFound('Permission')
}

/** Why a change that would leave nobody able to administer Saltdeck is refused. */
export const LAST_FULL_ADMIN = 'At least one active user must keep full administrative access (*:*)'

/**
 * Runs a change to users, roles or grants in one transaction and undoes it (409) when afterwards no active user holds
 * the full grant (*, *): every admin route would be 403 for everyone, and a restart would not repair it. `change`
 * runs on the transaction it is handed, and only on it.
 */
export async function keepingFullAdmin<T>(deps: AppDeps, change: (tx: Queryable) => Promise<T>): Promise<T> {
  const out = await deps.db.tx(async (tx) => {
    const out = await change(tx)
    if ((await fullAdminCount(tx)) === 0) throw new Conflict(LAST_FULL_ADMIN)
    return out
  })
  // Open streams recheck what their user may still see (a role taken, a user deactivated or deleted).
  authChanged(deps)
  return out
}

/** The ids among `ids` that name no role. */
export async function unknownRoleIds(deps: AppDeps, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  const found = new Set(await existingRoleIds(deps.db, ids))
  return ids.filter((i) => !found.has(i))
}

/** Each reference (a role id or a role name, any case) as a role id, or null where it names no role. */
export async function roleIdsOf(deps: AppDeps, refs: string[]): Promise<(string | null)[]> {
  if (!refs.length) return []
  const rows = await roleKeys(deps.db)
  const ids = new Set(rows.map((r) => r.id))
  const byName = new Map(rows.map((r) => [r.name_key, r.id]))
  return refs.map((r) => (ids.has(r) ? r : byName.get(r.toLowerCase()) ?? null))
}
