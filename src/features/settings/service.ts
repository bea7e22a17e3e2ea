/** Reading and partially updating settings; the salt password is kept encrypted. */
import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { settings } from '../../db/schema'
import { decrypt, encrypt } from '../../lib/secret'
import { sameUrl } from '../../lib/outbound'
import { iso } from '../../lib/clock'
import { SECTIONS, defaultsOf, type Section, type SectionValues } from './schema'

type Dict = Record<string, unknown>

function stored(deps: AppDeps, section: string): Dict {
  const row = deps.db.select().from(settings).where(eq(settings.section, section)).get()
  return row ? (JSON.parse(row.value) as Dict) : {}
}

/** A section's values: defaults overlaid with what is stored (salt keeps `password_enc`). */
export function readSection<S extends Section>(deps: AppDeps, section: S): SectionValues<S> {
  return { ...defaultsOf(SECTIONS[section]), ...stored(deps, section) } as SectionValues<S>
}

/** Time of the last settings change (epoch ms). */
function updatedAt(deps: AppDeps): number {
  const row = deps.db.select().from(settings).where(eq(settings.section, 'meta')).get()
  return row?.updatedAt ?? 0
}

/** The SettingsOut document. */
export function readSettings(deps: AppDeps) {
  const salt = readSection(deps, 'salt')
  return {
    salt: { url: salt.url ?? null, username: salt.username ?? null, password_set: typeof salt.password_enc === 'string', verify: salt.verify, eauth: salt.eauth, presence_method: salt.presence_method },
    pollers: readSection(deps, 'pollers'),
    widget: readSection(deps, 'widget'),
    logging: readSection(deps, 'logging'),
    updated_at: iso(updatedAt(deps) || deps.clock.now()),
  }
}

/**
 * Applies a partial update: absent or null properties leave the stored value alone. Returns SettingsOut.
 * A new salt-api URL without a new password forgets the stored password: it was given for the old address, and the
 * pollers' next login would carry it to the new one.
 */
export function updateSection(deps: AppDeps, section: Section, patch: Dict) {
  const now = deps.clock.now()
  deps.db.transaction((tx) => {
    const row = tx.select().from(settings).where(eq(settings.section, section)).get()
    const current: Dict = row ? JSON.parse(row.value) : {}
    const moved = section === 'salt' && typeof patch.url === 'string' && typeof current.url === 'string' && !sameUrl(current.url, patch.url)
    if (moved && (patch.password === null || patch.password === undefined)) delete current.password_enc
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === undefined) continue
      if (section === 'salt' && k === 'password') current.password_enc = encrypt(deps.secretKey, String(v))
      else current[k] = v
    }
    const value = JSON.stringify(current)
    tx.insert(settings).values({ section, value, updatedAt: now }).onConflictDoUpdate({ target: settings.section, set: { value, updatedAt: now } }).run()
    tx.insert(settings).values({ section: 'meta', value: '{}', updatedAt: now }).onConflictDoUpdate({ target: settings.section, set: { updatedAt: now } }).run()
  })
  if (section === 'logging') deps.log.format = readSection(deps, 'logging').log_format as 'json' | 'text'
  deps.onSettingsChanged?.(section)
  return readSettings(deps)
}

/** The salt connection with its decrypted password, for the salt client only. */
export function saltCredentials(deps: AppDeps) {
  const s = readSection(deps, 'salt')
  let password: string | null = null
  if (typeof s.password_enc === 'string') {
    try {
      password = decrypt(deps.secretKey, s.password_enc)
    } catch {
      deps.log.error('stored salt password cannot be decrypted with secret.key; set it again')
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
export function applyEnvSalt(deps: AppDeps) {
  const c = deps.config
  const method = c.presenceMethod === 'present' || c.presenceMethod === 'status' ? c.presenceMethod : null
  const patch: Dict = { url: c.saltUrl, username: c.saltUsername, password: c.saltPassword, eauth: c.saltEauth, verify: c.saltVerify, presence_method: method }
  if (Object.values(patch).some((v) => v !== null && v !== undefined)) updateSection(deps, 'salt', patch)
}
