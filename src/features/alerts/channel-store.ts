/** Alert channels: where notifications go. Secrets (`secret`, `password`) are stored encrypted and never returned; destinations are masked for those who may not manage alerts. */
import type { AppDeps } from '../../deps'
import { Conflict, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { newId } from '../../lib/ids'
import { decrypt, encrypt } from '../../lib/secret'
import { maskedConfig, unmaskConfig } from './channel-mask'
import { SECRET_KEYS as SECRETS, sameDestination } from './channels/registry'
import type { ChannelType } from './channels/types'
import { allChannels, channelById, deleteChannelRow, insertChannel, knownChannelIds, updateChannelRow, type ChannelRow } from './channel-row-store'
import { ruleUsingChannel } from './rule-store'

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

/** A channel as answered; `reveal` (manage alert:*) shows the destination whole, anyone else sees it masked. */
const out = (r: ChannelRow, reveal: boolean) => {
  const config = shown(JSON.parse(r.config))
  return { id: r.id, name: r.name, type: r.type as ChannelType, config: reveal ? config : maskedConfig(r.type, config), enabled: r.enabled === 1, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }
}
const row = async (deps: AppDeps, id: string) => {
  const r = await channelById(deps.db, id)
  if (!r) throw new NotFound('Channel')
  return r
}

/** Every channel, by name; destinations masked unless `reveal`. */
export const listChannels = async (deps: AppDeps, reveal = false) => ({ channels: (await allChannels(deps.db)).map((r) => out(r, reveal)) })
/** One channel; its destination masked unless `reveal`. */
export const getChannel = async (deps: AppDeps, id: string, reveal = false) => out(await row(deps, id), reveal)
/** The stored config of a channel with its secrets, for a test send. */
export async function channelForSend(deps: AppDeps, id: string) {
  const r = await row(deps, id)
  return { type: r.type, config: channelSecrets(deps, JSON.parse(r.config)) }
}

/** Creates a channel. */
export async function createChannel(deps: AppDeps, b: { name: string; type: ChannelType; config: Dict; enabled: boolean }) {
  const now = deps.clock.now()
  const id = newId()
  await insertChannel(deps.db, { id, name: b.name, type: b.type, config: JSON.stringify(seal(deps, b.config)), enabled: b.enabled ? 1 : 0, created_at: now, updated_at: now })
  return getChannel(deps, id, true)
}

/**
 * Changes a channel; a config replaces the stored one except secrets it leaves out, and those only while the
 * destination stays: a new URL, or mail host or port, forgets the stored secrets not entered again (they were given
 * for the old place). The type cannot change.
 */
export async function updateChannel(deps: AppDeps, id: string, b: { name?: string; config?: Dict; enabled?: boolean }) {
  const r = await row(deps, id)
  const type = r.type as ChannelType
  // A masked URL sent back as shown keeps the stored one.
  if (b.config) b = { ...b, config: unmaskConfig(type, b.config, JSON.parse(r.config)) }
  const stored = JSON.parse(r.config) as Dict
  const config = b.config ? JSON.stringify(seal(deps, b.config, sameDestination(type, stored, b.config) ? stored : {})) : r.config
  await updateChannelRow(deps.db, { id, name: b.name ?? r.name, config, enabled: b.enabled === undefined ? r.enabled : b.enabled ? 1 : 0, updated_at: deps.clock.now() })
  return getChannel(deps, id, true)
}

/** Deletes a channel that no rule names (409 otherwise). */
export async function deleteChannel(deps: AppDeps, id: string) {
  await row(deps, id)
  const used = await ruleUsingChannel(deps.db, id)
  if (used !== undefined) throw new Conflict(`Channel is used by alert rule ${used}`)
  await deleteChannelRow(deps.db, id)
}

/** The ids among these that name no channel. */
export async function unknownChannels(deps: AppDeps, ids: string[]): Promise<string[]> {
  const known = await knownChannelIds(deps.db, ids)
  return ids.filter((i) => !known.has(i))
}
