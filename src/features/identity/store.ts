/** SQL of the identity feature: provider settings and group → role mappings. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { identityMappings, identityProviders, roles } from '../../db/schema'
import { newId } from '../../lib/ids'
import { REGISTRY, type Provider } from './providers'

/** A mapping as answered: the stored mapping with its role's name. */
export type MappingRow = Pick<Row<typeof identityMappings>, 'id' | 'provider' | 'group_name' | 'role_id' | 'created_at'> & { role_name: string }

/** How a provider's group is compared: LDAP names and DNs ignore case, OIDC claims are matched exactly. */
const keyOf = (provider: Provider, group: string) => (REGISTRY[provider].groupsIgnoreCase ? group.toLowerCase() : group)

/** A provider's stored values (secrets still encrypted); {} when never written. */
export async function storedProvider(q: Queryable, provider: Provider): Promise<{ value: Record<string, unknown>; updatedAt: number | null }> {
  const row = await q.row<Pick<Row<typeof identityProviders>, 'value' | 'updated_at'>>(
    sql`SELECT ${identityProviders.value}, ${identityProviders.updatedAt} FROM ${identityProviders} WHERE ${identityProviders.provider} = ${provider}`)
  return { value: row ? (JSON.parse(row.value) as Record<string, unknown>) : {}, updatedAt: row?.updated_at ?? null }
}

/** Writes a provider's values (the whole JSON document). */
export async function writeProvider(q: Queryable, provider: Provider, value: Record<string, unknown>, now: number) {
  const json = JSON.stringify(value)
  await q.exec(sql`INSERT INTO ${identityProviders} (provider, value, updated_at) VALUES (${provider}, ${json}, ${now})
    ON CONFLICT (provider) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`)
}

/** The time of the last change to any provider (epoch ms), or null. */
export async function lastProviderChange(q: Queryable): Promise<number | null> {
  return (await q.row<{ t: number | null }>(sql`SELECT max(${identityProviders.updatedAt}) AS t FROM ${identityProviders}`))?.t ?? null
}

const MAPPING = sql`SELECT ${identityMappings.id}, ${identityMappings.provider}, ${identityMappings.group}, ${identityMappings.roleId}, ${roles.name} AS role_name,
  ${identityMappings.createdAt} FROM ${identityMappings} JOIN ${roles} ON ${roles.id} = ${identityMappings.roleId}`

/** Every mapping with its role's name, by provider then group. */
export const allMappings = (q: Queryable) =>
  q.rows<MappingRow>(sql`${MAPPING} ORDER BY ${identityMappings.provider}, ${identityMappings.groupKey}, ${roles.nameKey}`)

/** One mapping, or undefined. */
export const mappingById = (q: Queryable, id: string) => q.row<MappingRow>(sql`${MAPPING} WHERE ${identityMappings.id} = ${id}`)

/** Whether this provider already maps this group to this role. */
export async function mappingExists(q: Queryable, provider: Provider, group: string, roleId: string): Promise<boolean> {
  return !!(await q.row(sql`SELECT 1 AS x FROM ${identityMappings} WHERE ${identityMappings.provider} = ${provider}
    AND ${identityMappings.groupKey} = ${keyOf(provider, group)} AND ${identityMappings.roleId} = ${roleId}`))
}

/** Stores a mapping; returns its id. */
export async function insertMapping(q: Queryable, provider: Provider, group: string, roleId: string, now: number): Promise<string> {
  const id = newId()
  await q.exec(sql`INSERT INTO ${identityMappings} (id, provider, group_name, group_key, role_id, created_at)
    VALUES (${id}, ${provider}, ${group}, ${keyOf(provider, group)}, ${roleId}, ${now})`)
  return id
}

/** Deletes a mapping; false when there was none. */
export async function deleteMappingRow(q: Queryable, id: string): Promise<boolean> {
  return (await q.exec(sql`DELETE FROM ${identityMappings} WHERE ${identityMappings.id} = ${id}`)) > 0
}

/** The role ids mapped to any of these groups of this provider. */
export async function mappedRoleIds(q: Queryable, provider: Provider, groups: string[]): Promise<string[]> {
  const keys = [...new Set(groups.map((g) => keyOf(provider, g)))]
  if (!keys.length) return []
  const rows = await q.rows<Pick<Row<typeof identityMappings>, 'role_id'>>(sql`SELECT DISTINCT ${identityMappings.roleId} FROM ${identityMappings}
    WHERE ${identityMappings.provider} = ${provider} AND ${identityMappings.groupKey} IN ${keys}`)
  return rows.map((r) => r.role_id).sort()
}
