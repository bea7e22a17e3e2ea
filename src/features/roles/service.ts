/** Roles, their grants, the built-in roles and permission matching. */
import { and, asc, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { rolePermissions, roles } from '../../db/schema'
import { Conflict, NotFound } from '../../lib/errors'
import { globMatch } from '../../lib/glob'
import { newId } from '../../lib/ids'
import { authChanged } from '../auth/changes'

/** A (verb, resource_glob) pair. */
export interface Grant {
  verb: string
  resource_glob: string
}

/** A grant with the minions it is scoped to: target_glob is salt's glob on minion ids (`*`: every minion). */
export interface ScopedGrant extends Grant {
  target_glob: string
}

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
export function ensureBuiltinRoles(deps: AppDeps): Record<string, string> {
  const ids: Record<string, string> = {}
  deps.db.transaction((tx) => {
    for (const [name, spec] of Object.entries(BUILTIN_ROLES)) {
      let row = tx.select().from(roles).where(eq(roles.nameKey, name)).get()
      if (!row) {
        row = { id: newId(), name, nameKey: name, description: spec.description, isBuiltin: true, createdAt: deps.clock.now() }
        tx.insert(roles).values(row).run()
      } else if (!row.isBuiltin) tx.update(roles).set({ isBuiltin: true }).where(eq(roles.id, row.id)).run()
      for (const [verb, resourceGlob] of spec.grants)
        tx.insert(rolePermissions).values({ id: newId(), roleId: row.id, verb, resourceGlob, targetGlob: '*' }).onConflictDoNothing().run()
      ids[name] = row.id
    }
  })
  return ids
}

type RoleRow = typeof roles.$inferSelect
/** The public shape of a role. */
export const roleOut = (r: RoleRow) => ({ id: r.id, name: r.name, is_builtin: r.isBuiltin, description: r.description })

/** Reads a role or throws 404. */
export function getRole(deps: AppDeps, id: string): RoleRow {
  const r = deps.db.select().from(roles).where(eq(roles.id, id)).get()
  if (!r) throw new NotFound('Role')
  return r
}

/** Lists every role sorted by name. */
export function listRoles(deps: AppDeps) {
  const rows = deps.db.select().from(roles).orderBy(asc(roles.nameKey), asc(roles.name)).all()
  return { total: rows.length, roles: rows.map(roleOut) }
}

/** A role with its grants. */
export function roleDetail(deps: AppDeps, id: string) {
  const r = getRole(deps, id)
  const perms = deps.db.select().from(rolePermissions).where(eq(rolePermissions.roleId, id))
    .orderBy(asc(rolePermissions.verb), asc(rolePermissions.resourceGlob), asc(rolePermissions.targetGlob)).all()
  return { ...roleOut(r), permissions: perms.map((p) => ({ id: p.id, verb: p.verb, resource_glob: p.resourceGlob, target_glob: p.targetGlob })) }
}

/** Creates a role; names are unique case-insensitively. */
export function createRole(deps: AppDeps, name: string, description: string) {
  const key = name.toLowerCase()
  if (deps.db.select({ id: roles.id }).from(roles).where(eq(roles.nameKey, key)).get()) throw new Conflict('Role name already exists')
  const row = { id: newId(), name, nameKey: key, description, isBuiltin: false, createdAt: deps.clock.now() }
  deps.db.insert(roles).values(row).run()
  return roleOut(row)
}

/** Changes a role's description (built-in roles included). */
export function updateRole(deps: AppDeps, id: string, description: string | null | undefined) {
  const r = getRole(deps, id)
  if (description != null) {
    deps.db.update(roles).set({ description }).where(eq(roles.id, id)).run()
    r.description = description
  }
  return roleOut(r)
}

/** Deletes a custom role and, through the foreign keys, its assignments and grants. */
export function deleteRole(deps: AppDeps, id: string) {
  const r = getRole(deps, id)
  if (r.isBuiltin) throw new Conflict('Cannot delete a built-in role')
  keepingFullAdmin(deps, () => deps.db.delete(roles).where(eq(roles.id, id)).run())
  return r
}

/** Adds a grant to a custom role; `targetGlob` scopes an execute grant to the minions it matches. */
export function addPermission(deps: AppDeps, roleId: string, verb: string, resourceGlob: string, targetGlob = '*') {
  const r = getRole(deps, roleId)
  if (r.isBuiltin) throw new Conflict("Cannot change a built-in role's permissions")
  const existing = deps.db.select().from(rolePermissions).where(and(
    eq(rolePermissions.roleId, roleId), eq(rolePermissions.verb, verb), eq(rolePermissions.resourceGlob, resourceGlob), eq(rolePermissions.targetGlob, targetGlob),
  )).get()
  if (existing) throw new Conflict('Permission already exists')
  const row = { id: newId(), roleId, verb, resourceGlob, targetGlob }
  deps.db.insert(rolePermissions).values(row).run()
  return { id: row.id, verb, resource_glob: resourceGlob, target_glob: targetGlob }
}

/** A user's grants with their targets (the union over its roles), for the checks that look at minions. */
export function scopedGrantsOf(deps: AppDeps, userId: string): ScopedGrant[] {
  return deps.db.$client
    .query<ScopedGrant, [string]>(
      `SELECT DISTINCT p.verb AS verb, p.resource_glob AS resource_glob, p.target_glob AS target_glob FROM user_roles ur
       JOIN role_permissions p ON p.role_id = ur.role_id WHERE ur.user_id = ?1 ORDER BY p.verb, p.resource_glob, p.target_glob`,
    )
    .all(userId)
}

/** Removes a grant from a custom role. */
export function removePermission(deps: AppDeps, roleId: string, permId: string) {
  const r = getRole(deps, roleId)
  if (r.isBuiltin) throw new Conflict("Cannot change a built-in role's permissions")
  const res = keepingFullAdmin(deps, () => deps.db.$client.query('DELETE FROM role_permissions WHERE role_id = ?1 AND id = ?2').run(roleId, permId))
  if (res.changes === 0) throw new NotFound('Permission')
}

/** Why a change that would leave nobody able to administer Saltdeck is refused. */
export const LAST_FULL_ADMIN = 'At least one active user must keep full administrative access (*:*)'

/**
 * Runs a change to users, roles or grants in one transaction and undoes it (409) when afterwards no active user holds
 * the full grant (*, *): every admin route would be 403 for everyone, and a restart would not repair it.
 */
export function keepingFullAdmin<T>(deps: AppDeps, change: () => T): T {
  const db = deps.db.$client
  const out = db.transaction(() => {
    const out = change()
    const admins = db.query<{ n: number }, []>(
      `SELECT count(*) AS n FROM users u WHERE u.is_active = 1 AND EXISTS (SELECT 1 FROM user_roles ur JOIN role_permissions p ON p.role_id = ur.role_id
         WHERE ur.user_id = u.id AND p.verb = '*' AND p.resource_glob = '*' AND p.target_glob = '*')`,
    ).get()!.n
    if (admins === 0) throw new Conflict(LAST_FULL_ADMIN)
    return out
  })()
  // Open streams recheck what their user may still see (a role taken, a user deactivated or deleted).
  authChanged(deps)
  return out
}

/** The ids among `ids` that name no role. */
export function unknownRoleIds(deps: AppDeps, ids: string[]): string[] {
  if (!ids.length) return []
  const found = new Set(deps.db.select({ id: roles.id }).from(roles).where(sql`${roles.id} in ${ids}`).all().map((r) => r.id))
  return ids.filter((i) => !found.has(i))
}

/** Each reference (a role id or a role name, any case) as a role id, or null where it names no role. */
export function roleIdsOf(deps: AppDeps, refs: string[]): (string | null)[] {
  if (!refs.length) return []
  const rows = deps.db.select({ id: roles.id, key: roles.nameKey }).from(roles).all()
  const ids = new Set(rows.map((r) => r.id))
  const byName = new Map(rows.map((r) => [r.key, r.id]))
  return refs.map((r) => (ids.has(r) ? r : byName.get(r.toLowerCase()) ?? null))
}
