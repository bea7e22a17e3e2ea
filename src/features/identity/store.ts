/** SQL of the identity feature: provider settings and group → role mappings. */
import { and, asc, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { identityMappings, identityProviders, roles } from '../../db/schema'
import { newId } from '../../lib/ids'
import { REGISTRY, type Provider } from './providers'

/** How a provider's group is compared: LDAP names and DNs ignore case, OIDC claims are matched exactly. */
const keyOf = (provider: Provider, group: string) => (REGISTRY[provider].groupsIgnoreCase ? group.toLowerCase() : group)

/** A provider's stored values (secrets still encrypted); {} when never written. */
export function storedProvider(deps: AppDeps, provider: Provider): { value: Record<string, unknown>; updatedAt: number | null } {
  const row = deps.db.select().from(identityProviders).where(eq(identityProviders.provider, provider)).get()
  return { value: row ? (JSON.parse(row.value) as Record<string, unknown>) : {}, updatedAt: row?.updatedAt ?? null }
}

/** Rewrites a provider's stored values inside one transaction: `change` gets the current values and edits them. */
export function changeProvider(deps: AppDeps, provider: Provider, change: (current: Record<string, unknown>) => void) {
  const now = deps.clock.now()
  deps.db.transaction((tx) => {
    const row = tx.select().from(identityProviders).where(eq(identityProviders.provider, provider)).get()
    const current = row ? (JSON.parse(row.value) as Record<string, unknown>) : {}
    change(current)
    const value = JSON.stringify(current)
    tx.insert(identityProviders).values({ provider, value, updatedAt: now })
      .onConflictDoUpdate({ target: identityProviders.provider, set: { value, updatedAt: now } }).run()
  })
}

/** The time of the last change to any provider (epoch ms), or null. */
export function lastProviderChange(deps: AppDeps): number | null {
  const rows = deps.db.select({ t: identityProviders.updatedAt }).from(identityProviders).all()
  return rows.length ? Math.max(...rows.map((r) => r.t)) : null
}

const mappingCols = {
  id: identityMappings.id, provider: identityMappings.provider, group: identityMappings.group, roleId: identityMappings.roleId,
  roleName: roles.name, createdAt: identityMappings.createdAt,
}

/** Every mapping with its role's name, by provider then group. */
export function allMappings(deps: AppDeps) {
  return deps.db.select(mappingCols).from(identityMappings).innerJoin(roles, eq(roles.id, identityMappings.roleId))
    .orderBy(asc(identityMappings.provider), asc(identityMappings.groupKey), asc(roles.nameKey)).all()
}

/** One mapping, or undefined. */
export function mappingById(deps: AppDeps, id: string) {
  return deps.db.select(mappingCols).from(identityMappings).innerJoin(roles, eq(roles.id, identityMappings.roleId)).where(eq(identityMappings.id, id)).get()
}

/** Whether this provider already maps this group to this role. */
export function mappingExists(deps: AppDeps, provider: Provider, group: string, roleId: string) {
  return !!deps.db.select({ id: identityMappings.id }).from(identityMappings)
    .where(and(eq(identityMappings.provider, provider), eq(identityMappings.groupKey, keyOf(provider, group)), eq(identityMappings.roleId, roleId))).get()
}

/** Stores a mapping; returns its id. */
export function insertMapping(deps: AppDeps, provider: Provider, group: string, roleId: string): string {
  const id = newId()
  deps.db.insert(identityMappings).values({ id, provider, group, groupKey: keyOf(provider, group), roleId, createdAt: deps.clock.now() }).run()
  return id
}

/** Deletes a mapping; false when there was none. */
export function deleteMappingRow(deps: AppDeps, id: string): boolean {
  return deps.db.$client.query('DELETE FROM identity_mappings WHERE id = ?1').run(id).changes > 0
}

/** The role ids mapped to any of these groups of this provider. */
export function mappedRoleIds(deps: AppDeps, provider: Provider, groups: string[]): string[] {
  const keys = [...new Set(groups.map((g) => keyOf(provider, g)))]
  if (!keys.length) return []
  const rows = deps.db.selectDistinct({ roleId: identityMappings.roleId }).from(identityMappings)
    .where(and(eq(identityMappings.provider, provider), inArray(identityMappings.groupKey, keys))).all()
  return rows.map((r) => r.roleId).sort()
}
