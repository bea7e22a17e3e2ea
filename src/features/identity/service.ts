/** Identity settings and group → role mappings (contract §14); secrets kept encrypted like the salt password. */
import type { AppDeps } from '../../deps'
import { Conflict, Invalid, invalid, NotFound } from '../../lib/errors'
import { decrypt, encrypt } from '../../lib/secret'
import { sameUrl } from '../../lib/outbound'
import { iso, isoOrNull } from '../../lib/clock'
import { unknownRoleIds } from '../roles/service'
import { PROVIDERS, REGISTRY, type Provider, type ProviderConfig } from './providers'
import { defaultsOf } from './schema'
import { allMappings, deleteMappingRow, insertMapping, lastProviderChange, mappingById, mappingExists, storedProvider, writeProvider, type MappingRow } from './store'

const encKey = (p: Provider) => `${REGISTRY[p].secret}_enc`

/** A provider's settings as answered: defaults overlaid with what is stored, the secret only as `<secret>_set`. */
async function providerOut(deps: AppDeps, p: Provider) {
  const def = REGISTRY[p]
  const { value } = await storedProvider(deps.db, p)
  const out: Record<string, unknown> = { ...defaultsOf(def.fields) }
  for (const k of Object.keys(def.fields)) if (k in value) out[k] = value[k]
  delete out[def.secret]
  out[`${def.secret}_set`] = typeof value[encKey(p)] === 'string'
  return out
}

/** GET /api/admin/identity: every provider's settings. */
export async function readIdentity(deps: AppDeps) {
  const at = await lastProviderChange(deps.db)
  const out: Record<string, Record<string, unknown>> = {}
  for (const p of PROVIDERS) out[p] = await providerOut(deps, p)
  return { ...(out as Record<Provider, Record<string, unknown>>), updated_at: isoOrNull(at) }
}

/**
 * A provider's settings with its secret decrypted, for signing in and testing only: never answered or logged. A
 * secret that the key no longer opens reads as unset, and the log says so (without it).
 */
export async function providerConfig(deps: AppDeps, p: Provider): Promise<ProviderConfig> {
  const def = REGISTRY[p]
  const { value } = await storedProvider(deps.db, p)
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
export async function updateProvider(deps: AppDeps, p: Provider, patch: Record<string, unknown>) {
  const def = REGISTRY[p]
  await changeProvider(deps, p, (current) => {
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

/** Rewrites a provider's stored values inside one transaction: `change` gets the current values and edits them (or throws). */
async function changeProvider(deps: AppDeps, provider: Provider, change: (current: Record<string, unknown>) => void) {
  const now = deps.clock.now()
  await deps.db.tx(async (tx) => {
    const { value } = await storedProvider(tx, provider)
    change(value)
    await writeProvider(tx, provider, value, now)
  })
}

/** The names of the fields a patch changes, for the audit entry (never their values). */
export const changedFields = (patch: Record<string, unknown>) => Object.keys(patch).filter((k) => patch[k] !== null && patch[k] !== undefined)

const mappingOut = (m: MappingRow) => ({ id: m.id, provider: m.provider, group: m.group_name, role_id: m.role_id, role_name: m.role_name, created_at: iso(m.created_at) })

/** Every group → role mapping. */
export async function listMappings(deps: AppDeps) {
  const rows = (await allMappings(deps.db)).map(mappingOut)
  return { total: rows.length, mappings: rows }
}

/** Adds a mapping; 422 for an unknown role, 409 when the same one exists. */
export async function addMapping(deps: AppDeps, provider: Provider, group: string, roleId: string) {
  if ((await unknownRoleIds(deps, [roleId])).length) throw invalid(['role_id'], 'unknown role id', roleId)
  if (await mappingExists(deps.db, provider, group, roleId)) throw new Conflict('Mapping already exists')
  const id = await insertMapping(deps.db, provider, group, roleId, deps.clock.now())
  return mappingOut((await mappingById(deps.db, id))!)
}

/** Deletes a mapping; returns what it was (for the audit entry). */
export async function removeMapping(deps: AppDeps, id: string) {
  const m = await mappingById(deps.db, id)
  if (!m || !(await deleteMappingRow(deps.db, id))) throw new NotFound('Mapping')
  return mappingOut(m)
}
