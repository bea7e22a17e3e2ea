/** Identity settings and group → role mappings (contract §14); secrets kept encrypted like the salt password. */
import type { AppDeps } from '../../deps'
import { Conflict, Invalid, invalid, NotFound } from '../../lib/errors'
import { decrypt, encrypt } from '../../lib/secret'
import { sameUrl } from '../../lib/outbound'
import { iso, isoOrNull } from '../../lib/clock'
import { unknownRoleIds } from '../roles/service'
import { PROVIDERS, REGISTRY, type Provider, type ProviderConfig } from './providers'
import { defaultsOf } from './schema'
import { allMappings, changeProvider, deleteMappingRow, insertMapping, lastProviderChange, mappingById, mappingExists, storedProvider } from './store'

const encKey = (p: Provider) => `${REGISTRY[p].secret}_enc`

/** A provider's settings as answered: defaults overlaid with what is stored, the secret only as `<secret>_set`. */
function providerOut(deps: AppDeps, p: Provider) {
  const def = REGISTRY[p]
  const { value } = storedProvider(deps, p)
  const out: Record<string, unknown> = { ...defaultsOf(def.fields) }
  for (const k of Object.keys(def.fields)) if (k in value) out[k] = value[k]
  delete out[def.secret]
  out[`${def.secret}_set`] = typeof value[encKey(p)] === 'string'
  return out
}

/** GET /api/admin/identity: every provider's settings. */
export function readIdentity(deps: AppDeps) {
  const at = lastProviderChange(deps)
  return { ...(Object.fromEntries(PROVIDERS.map((p) => [p, providerOut(deps, p)])) as Record<Provider, Record<string, unknown>>), updated_at: isoOrNull(at) }
}

/**
 * A provider's settings with its secret decrypted, for signing in and testing only: never answered or logged. A
 * secret that the key no longer opens reads as unset, and the log says so (without it).
 */
export function providerConfig(deps: AppDeps, p: Provider): ProviderConfig {
  const def = REGISTRY[p]
  const { value } = storedProvider(deps, p)
  const cfg: ProviderConfig = { ...defaultsOf(def.fields) }
  for (const k of Object.keys(def.fields)) if (k in value) cfg[k] = value[k]
  cfg[def.secret] = null
  const sealed = value[encKey(p)]
  if (typeof sealed === 'string') {
    try {
      cfg[def.secret] = decrypt(deps.secretKey, sealed)
    } catch {
      deps.log.error(`stored ${def.label} ${def.secret} cannot be decrypted with secret.key; set it again`)
    }
  }
  return cfg
}

/**
 * Applies a partial update to one provider: absent or null fields stay; "" clears a text field (the secret included).
 * A new destination (LDAP url, OIDC issuer) without a new secret forgets the stored secret: it was given for the old
 * one. Enabling needs the provider's required fields.
 */
export function updateProvider(deps: AppDeps, p: Provider, patch: Record<string, unknown>) {
  const def = REGISTRY[p]
  changeProvider(deps, p, (current) => {
    const dest = patch[def.destination]
    const moved = typeof dest === 'string' && typeof current[def.destination] === 'string' && !sameUrl(current[def.destination] as string, dest)
    if (moved && (patch[def.secret] === null || patch[def.secret] === undefined)) delete current[encKey(p)]
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === undefined) continue
      if (k === def.secret) {
        if (v === '') delete current[encKey(p)]
        else current[encKey(p)] = encrypt(deps.secretKey, String(v))
      } else current[k] = v === '' ? null : v
    }
    const merged = { ...defaultsOf(def.fields), ...current }
    if (merged.enabled === true) {
      const missing = def.required.filter((k) => typeof merged[k] !== 'string' || merged[k] === '')
      if (missing.length) throw new Invalid(missing.map((k) => ({ field: [k], sentence: `${k} is required to enable ${def.label}`, value: patch[k] ?? null })))
    }
  })
  return readIdentity(deps)
}

/** The names of the fields a patch changes, for the audit entry (never their values). */
export const changedFields = (patch: Record<string, unknown>) => Object.keys(patch).filter((k) => patch[k] !== null && patch[k] !== undefined)

type MappingRow = ReturnType<typeof allMappings>[number]
const mappingOut = (m: MappingRow) => ({ id: m.id, provider: m.provider, group: m.group, role_id: m.roleId, role_name: m.roleName, created_at: iso(m.createdAt) })

/** Every group → role mapping. */
export function listMappings(deps: AppDeps) {
  const rows = allMappings(deps).map(mappingOut)
  return { total: rows.length, mappings: rows }
}

/** Adds a mapping; 422 for an unknown role, 409 when the same one exists. */
export function addMapping(deps: AppDeps, provider: Provider, group: string, roleId: string) {
  if (unknownRoleIds(deps, [roleId]).length) throw invalid(['role_id'], 'unknown role id', roleId)
  if (mappingExists(deps, provider, group, roleId)) throw new Conflict('Mapping already exists')
  return mappingOut(mappingById(deps, insertMapping(deps, provider, group, roleId))!)
}

/** Deletes a mapping; returns what it was (for the audit entry). */
export function removeMapping(deps: AppDeps, id: string) {
  const m = mappingById(deps, id)
  if (!m || !deleteMappingRow(deps, id)) throw new NotFound('Mapping')
  return mappingOut(m)
}
