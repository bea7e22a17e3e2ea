/** The keys, presence, grains and retention pollers (contract §9). */
import type { Poller } from './scheduler'
import type { SaltRuntime } from '../salt/runtime'
import { noIntents, type KeyChange } from '../salt/normalize'
import { upsertMinionFacts } from '../features/minions/service'
import { pruneEvents } from '../features/activity/service'
import { readSection } from '../features/settings/service'

const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const pollerSetting = (rt: SaltRuntime, key: string) => Number(readSection(rt.deps, 'pollers')[key] ?? 0)

/** Minions per grains call. */
export const GRAINS_BATCH = 200

/** keys: wheel key.list_all; key state per minion and key.* events on change. */
export const keysPoller = (rt: SaltRuntime): Poller => ({
  name: 'keys',
  intervalSeconds: () => pollerSetting(rt, 'minion_state_keys_interval_seconds'),
  initialDelaySeconds: () => pollerSetting(rt, 'minion_state_initial_delay_seconds'),
  async tick() {
    const r = (await rt.client.wheel('key.list_all')) as Record<string, unknown>
    const want = new Map<string, KeyChange['act']>()
    for (const id of ids(r.minions)) want.set(id, 'accept')
    for (const id of ids(r.minions_pre)) want.set(id, 'pend')
    for (const id of ids(r.minions_rejected)) want.set(id, 'reject')
    for (const id of ids(r.minions_denied)) want.set(id, 'denied')
    const now = rt.deps.clock.now()
    const keys: KeyChange[] = [...want].map(([minionId, act]) => ({ minionId, act, ts: now }))
    const stored = rt.deps.db.$client.query<{ id: string }, []>('SELECT id FROM minions WHERE key_state IS NOT NULL').all()
    for (const { id } of stored) if (!want.has(id)) keys.push({ minionId: id, act: 'delete', ts: now })
    rt.ingest.apply([{ ...noIntents(), keys }])
    return want.size
  },
})

/** presence: runner manage.present (or manage.status); online flags and minion.online/offline on change. */
export const presencePoller = (rt: SaltRuntime): Poller => ({
  name: 'presence',
  intervalSeconds: () => pollerSetting(rt, 'minion_state_presence_interval_seconds'),
  initialDelaySeconds: () => pollerSetting(rt, 'minion_state_initial_delay_seconds'),
  async tick() {
    const byStatus = rt.deps.config.presenceMethod === 'status'
    const r = await rt.client.runner(byStatus ? 'manage.status' : 'manage.present')
    const present = byStatus ? ids((r as { up?: unknown })?.up) : ids(r)
    rt.ingest.apply([{ ...noIntents(), presentList: { ids: present, ts: rt.deps.clock.now() } }])
    return present.length
  },
})

/** grains: local grains.items on accepted minions in batches; grains and the summary columns. */
export const grainsPoller = (rt: SaltRuntime): Poller => ({
  name: 'grains',
  intervalSeconds: () => pollerSetting(rt, 'minion_state_grains_interval_seconds'),
  initialDelaySeconds: () => pollerSetting(rt, 'minion_state_initial_delay_seconds'),
  async tick() {
    const all = rt.deps.db.$client.query<{ id: string }, []>("SELECT id FROM minions WHERE key_state = 'accepted' ORDER BY id").all().map((r) => r.id)
    let n = 0
    for (let i = 0; i < all.length; i += GRAINS_BATCH) {
      const batch = all.slice(i, i + GRAINS_BATCH)
      const r = await rt.client.local(batch, 'grains.items', { tgt_type: 'list' })
      const facts = Object.entries(r ?? {})
        .filter(([id, g]) => batch.includes(id) && g && typeof g === 'object' && !Array.isArray(g))
        .map(([id, g]) => ({ id, grains: g as Record<string, unknown> }))
      upsertMinionFacts(rt.deps, facts)
      n += facts.length
    }
    return n
  },
})

/** retention: deletes activity events older than event_stream_retention_days, at start and hourly. */
export const retentionPoller = (rt: SaltRuntime): Poller => ({
  name: 'retention',
  intervalSeconds: () => 3600,
  initialDelaySeconds: () => 0,
  tick: async () => pruneEvents(rt.deps, pollerSetting(rt, 'event_stream_retention_days') || 30),
})
