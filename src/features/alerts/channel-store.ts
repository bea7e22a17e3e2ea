/** Alert channels: where notifications go. Secrets (`secret`, `password`) are stored encrypted and never returned; destinations are masked for those who may not manage alerts. */
import type { AppDeps } from '../../deps'
import { Conflict, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { decrypt, encrypt } from '../../lib/secret'
import { maskedConfig, unmaskConfig } from './channel-mask'
import { SECRET_KEYS as SECRETS, sameDestination } from './channels/registry'
import type { ChannelType } from './channels/types'

export { CHANNEL_TYPES, type ChannelType } from './channels/types'

type Dict = Record<string, unknown>

/** A config as stored: secrets encrypted; `keep` holds the stored secrets a patch leaves alone. */
function seal(deps: AppDeps, config: Dict, keep: Dict = {}): Dict {
  const out: Dict = {}
  for (const [k, v] of Object.entries(config)) {
    if (SECRETS.includes(k)) {
      if (typeof v === 'string' && v) out[`${k}_enc`] = encrypt(deps.secretKey, v)
    } else out[k] = v
  }
  for (const k of SECRETS) if (!(k in config) && keep[`${k}_enc`]) out[`${k}_enc`] = keep[`${k}_enc`]
  return out
}

/** A stored config as shown: secrets replaced by `<key>_set: true`. */
function shown(stored: Dict): Dict {
  const out: Dict = {}
  for (const [k, v] of Object.entries(stored)) {
    const m = /^(.*)_enc$/.exec(k)
    if (m && SECRETS.includes(m[1]!)) out[`${m[1]}_set`] = true
    else out[k] = v
  }
  return out
}

/** A stored config with its secrets decrypted, for the sender only. */
export function channelSecrets(deps: AppDeps, stored: Dict): Dict {
  const out: Dict = {}
  for (const [k, v] of Object.entries(stored)) {
    const m = /^(.*)_enc$/.exec(k)
    if (m && SECRETS.includes(m[1]!) && typeof v === 'string') out[m[1]!] = decrypt(deps.secretKey, v)
    else out[k] = v
  }
  return out
}

interface ChannelRow {
  id: string
  name: string
  type: ChannelType
  config: string
  enabled: number
  created_at: number
  updated_at: number
}

/** A channel as answered; `reveal` (manage alert:*) shows the destination whole, anyone else sees it masked. */
const out = (r: ChannelRow, reveal: boolean) => {
  const config = shown(JSON.parse(r.config))
  return { id: r.id, name: r.name, type: r.type, config: reveal ? config : maskedConfig(r.type, config), enabled: r.enabled === 1, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }
}
const row = (deps: AppDeps, id: string) => {
  const r = deps.db.$client.query<ChannelRow, [string]>('SELECT * FROM alert_channels WHERE id = ?1').get(id)
  if (!r) throw new NotFound('Channel')
  return r
}

/** Every channel, by name; destinations masked unless `reveal`. */
export const listChannels = (deps: AppDeps, reveal = false) => ({ channels: deps.db.$client.query<ChannelRow, []>('SELECT * FROM alert_channels ORDER BY name, id').all().map((r) => out(r, reveal)) })
/** One channel; its destination masked unless `reveal`. */
export const getChannel = (deps: AppDeps, id: string, reveal = false) => out(row(deps, id), reveal)
/** The stored config of a channel with its secrets, for a test send. */
export function channelForSend(deps: AppDeps, id: string) {
  const r = row(deps, id)
  return { type: r.type, config: channelSecrets(deps, JSON.parse(r.config)) }
}

/** Creates a channel. */
export function createChannel(deps: AppDeps, b: { name: string; type: ChannelType; config: Dict; enabled: boolean }) {
  const now = deps.clock.now()
  const id = newId()
  deps.db.$client.query('INSERT INTO alert_channels (id, name, type, config, enabled, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)').run(id, b.name, b.type, JSON.stringify(seal(deps, b.config)), b.enabled ? 1 : 0, now)
  return getChannel(deps, id, true)
}

/**
 * Changes a channel; a config replaces the stored one except secrets it leaves out, and those only while the
 * destination stays: a new URL, or mail host or port, forgets the stored secrets not entered again (they were given
 * for the old place). The type cannot change.
 */
export function updateChannel(deps: AppDeps, id: string, b: { name?: string; config?: Dict; enabled?: boolean }) {
  const r = row(deps, id)
  // A masked URL sent back as shown keeps the stored one.
  if (b.config) b = { ...b, config: unmaskConfig(r.type, b.config, JSON.parse(r.config)) }
  const stored = JSON.parse(r.config) as Dict
  const config = b.config ? JSON.stringify(seal(deps, b.config, sameDestination(r.type, stored, b.config) ? stored : {})) : r.config
  deps.db.$client.query('UPDATE alert_channels SET name = ?2, config = ?3, enabled = ?4, updated_at = ?5 WHERE id = ?1').run(id, b.name ?? r.name, config, b.enabled === undefined ? r.enabled : b.enabled ? 1 : 0, deps.clock.now())
  return getChannel(deps, id, true)
}

/** Deletes a channel that no rule names (409 otherwise). */
export function deleteChannel(deps: AppDeps, id: string) {
  row(deps, id)
  const used = deps.db.$client.query<{ name: string }, [string]>('SELECT name FROM alert_rules WHERE EXISTS (SELECT 1 FROM json_each(channel_ids) WHERE value = ?1) LIMIT 1').get(id)
  if (used) throw new Conflict(`Channel is used by alert rule ${used.name}`)
  deps.db.$client.query('DELETE FROM alert_channels WHERE id = ?1').run(id)
}

/** The ids among these that name no channel. */
export function unknownChannels(deps: AppDeps, ids: string[]): string[] {
  const known = new Set(deps.db.$client.query<{ id: string }, [string]>('SELECT id FROM alert_channels WHERE id IN (SELECT value FROM json_each(?1))').all(JSON.stringify(ids)).map((r) => r.id))
  return ids.filter((i) => !known.has(i))
}
