/**
 * Reading and partially updating settings; the salt password is kept encrypted. The service holds the stored sections
 * in memory (loaded at start, written through on every change): the salt side reads them synchronously, at every
 * poller tick, salt-api login and stream check.
 */
import type { AppDeps } from '../../deps'
import { decrypt, encrypt } from '../../lib/secret'
import { sameUrl } from '../../lib/outbound'
import { iso } from '../../lib/clock'
import { SECTIONS, defaultsOf, type Section, type SectionValues } from './schema'
import { allSections, sectionRow, writeSection } from './store'

type Dict = Record<string, unknown>

/** The stored sections of one service and the time of the last change (the meta row's). */
interface Loaded {
  sections: Map<string, Dict>
  updatedAt: number
}
const loaded = new WeakMap<AppDeps, Loaded>()

/** Reads every stored section into the service's memory: at start (bootstrap), and by readSettings. */
export async function loadSettings(deps: AppDeps) {
  const rows = await allSections(deps.db)
  const sections = new Map(rows.filter((r) => r.section !== 'meta').map((r) => [r.section, JSON.parse(r.value) as Dict]))
  loaded.set(deps, { sections, updatedAt: rows.find((r) => r.section === 'meta')?.updated_at ?? 0 })
}

function loadedOf(deps: AppDeps): Loaded {
  const l = loaded.get(deps)
  // A programming error, not an operator's: every service runs bootstrap (which loads them) before it serves.
  if (!l) throw new Error('settings read before loadSettings(deps)')
  return l
}

function stored(deps: AppDeps, section: string): Dict {
  return loadedOf(deps).sections.get(section) ?? {}
}

/** A section's values: defaults overlaid with what is stored (salt keeps `password_enc`). */
export function readSection<S extends Section>(deps: AppDeps, section: S): SectionValues<S> {
  return { ...defaultsOf(SECTIONS[section]), ...stored(deps, section) } as SectionValues<S>
}

/** The SettingsOut document, read from the database. */
export async function readSettings(deps: AppDeps) {
  await loadSettings(deps)
  return {
    salt: saltOut(readSection(deps, 'salt')),
    pollers: readSection(deps, 'pollers'),
    widget: readSection(deps, 'widget'),
    logging: readSection(deps, 'logging'),
    updated_at: iso(loadedOf(deps).updatedAt || deps.clock.now()),
  }
}

/** A partial update over a stored document: absent or null properties leave the stored value alone. */
function mergePatch(current: Dict, patch: Dict): Dict {
  const next = { ...current }
  for (const [k, v] of Object.entries(patch)) if (v !== null && v !== undefined) next[k] = v
  return next
}

/**
 * A partial update of a salt connection's stored document (the salt section, and every salt source's row): the
 * password is encrypted into `password_enc`, and a new salt-api URL without a new password forgets the stored password:
 * it was given for the old address, and the pollers' next login would carry it to the new one.
 */
export function mergeSalt(secretKey: Uint8Array, current: Dict, patch: Dict): Dict {
  const next = { ...current }
  const moved = typeof patch.url === 'string' && typeof current.url === 'string' && !sameUrl(current.url, patch.url)
  if (moved && (patch.password === null || patch.password === undefined)) delete next.password_enc
  const { password, ...rest } = patch
  if (password !== null && password !== undefined) next.password_enc = encrypt(secretKey, String(password))
  return mergePatch(next, rest)
}

/** A salt connection's stored document as answered: defaults filled in, the password only as `password_set`. */
export function saltOut(stored: Dict) {
  const s = { ...defaultsOf(SECTIONS.salt), ...stored }
  return {
    url: (s.url ?? null) as string | null, username: (s.username ?? null) as string | null, password_set: typeof s.password_enc === 'string',
    verify: s.verify as boolean, eauth: s.eauth as string, presence_method: s.presence_method as string,
  }
}

/** Applies a partial update (salt: `mergeSalt`). Returns SettingsOut. */
export async function updateSection(deps: AppDeps, section: Section, patch: Dict) {
  const now = deps.clock.now()
  const written = await deps.db.tx(async (tx) => {
    const row = await sectionRow(tx, section)
    const current: Dict = row ? JSON.parse(row.value) : {}
    const next = section === 'salt' ? mergeSalt(deps.secretKey, current, patch) : mergePatch(current, patch)
    await writeSection(tx, section, JSON.stringify(next), now)
    return next
  })
  // Written through once committed: the salt side reads the new values from here on.
  const l = loaded.get(deps)
  if (l) {
    l.sections.set(section, written)
    l.updatedAt = now
  } else await loadSettings(deps)
  if (section === 'logging') deps.log.format = readSection(deps, 'logging').log_format as 'json' | 'text'
  deps.onSettingsChanged?.(section)
  // Every other instance reloads the section from the database and reschedules as this one did (contract §15).
  deps.bus?.publish('settings', section)
  return readSettings(deps)
}

/** Another instance changed `section`: reads every section anew and applies the change as updateSection does here. */
export async function reloadSection(deps: AppDeps, section: string) {
  await loadSettings(deps)
  if (section === 'logging') deps.log.format = readSection(deps, 'logging').log_format as 'json' | 'text'
  deps.onSettingsChanged?.(section)
}

/**
 * Reads every section anew and applies those that differ from what this service held (news of their change may have
 * been lost while the cluster bus was reconnecting). Returns the changed sections.
 */
export async function resyncSettings(deps: AppDeps): Promise<string[]> {
  const before = loaded.get(deps)?.sections ?? new Map<string, Dict>()
  const was = new Map([...before].map(([k, v]) => [k, JSON.stringify(v)]))
  await loadSettings(deps)
  const now = loadedOf(deps).sections
  const changed = [...new Set([...was.keys(), ...now.keys()])].filter((k) => was.get(k) !== (now.has(k) ? JSON.stringify(now.get(k)) : undefined))
  for (const section of changed) {
    if (section === 'logging') deps.log.format = readSection(deps, 'logging').log_format as 'json' | 'text'
    deps.onSettingsChanged?.(section)
  }
  return changed
}

/** The salt connection with its decrypted password, for the salt client only. */
export function saltCredentials(deps: AppDeps) {
  return credentialsOf(deps, readSection(deps, 'salt'), 'default')
}

/** A salt connection's stored document with its password decrypted (for a salt client only; `source` names it in the log). */
export function credentialsOf(deps: Pick<AppDeps, 'secretKey' | 'log'>, stored: Dict, source: string) {
  const s = { ...defaultsOf(SECTIONS.salt), ...stored }
  let password: string | null = null
  if (typeof s.password_enc === 'string') {
    try {
      password = decrypt(deps.secretKey, s.password_enc)
    } catch {
      deps.log.error('stored salt password cannot be decrypted with secret.key; set it again', { source })
    }
  }
  return { url: s.url as string | null, username: s.username as string | null, password, verify: s.verify as boolean, eauth: s.eauth as string }
}

/** Whether the salt connection is complete, and which fields are missing. */
export function settingsStatus(deps: AppDeps) {
  const s = readSection(deps, 'salt')
  const missing = [
    ...(s.url ? [] : ['salt.url']),
    ...(s.username ? [] : ['salt.username']),
    ...(typeof s.password_enc === 'string' ? [] : ['salt.password']),
  ]
  return { configured: missing.length === 0, missing }
}

/** How presence is polled (the salt section's presence_method). */
export function presenceMethod(deps: AppDeps): 'present' | 'status' {
  return readSection(deps, 'salt').presence_method === 'status' ? 'status' : 'present'
}

/** Writes the SALTDECK_SALT_* and SALTDECK_PRESENCE_METHOD environment values over the stored salt settings (they win at start). */
export async function applyEnvSalt(deps: AppDeps) {
  const c = deps.config
  const method = c.presenceMethod === 'present' || c.presenceMethod === 'status' ? c.presenceMethod : null
  const patch: Dict = { url: c.saltUrl, username: c.saltUsername, password: c.saltPassword, eauth: c.saltEauth, verify: c.saltVerify, presence_method: method }
  if (Object.values(patch).some((v) => v !== null && v !== undefined)) await updateSection(deps, 'salt', patch)
}
