/**
 * Salt's key, presence and start facts into the minion rows (the one writer of key_state, key_fingerprint, online,
 * last_seen and offline_since) and
 * their activity events. Each change is compared with the stored state, so a poller repeating what the stream said
 * records nothing twice.
 */
import type { AppDeps } from '../../deps'
import type { KeyChange, KeyFingerprint, SaltFacts } from '../../salt/facts'
import { startRecordedNear, type EventInput } from '../activity/service'
import { ensureMinion } from './service'

const KEY_STATE = { pend: 'pending', accept: 'accepted', reject: 'rejected', delete: null, denied: 'denied' } as const
const KEY_WORD = { pend: 'is pending', accept: 'accepted', reject: 'rejected', delete: 'deleted', denied: 'denied' } as const
/** Two start events of one minion this close together are one start (salt sends the legacy tag too). */
const START_DEDUPE_MS = 10_000

/** Applies key changes; key.* events for real changes, with the acting user when the change was made through Saltdeck. */
export function recordKeyChanges(deps: AppDeps, keys: KeyChange[], initiator: string | null, out: EventInput[]) {
  const db = deps.db.$client
  for (const k of keys) {
    const row = db.query<{ key_state: string | null }, [string]>('SELECT key_state FROM minions WHERE id = ?1').get(k.minionId)
    const next = KEY_STATE[k.act]
    if (row && row.key_state === next) continue
    if (!row && next === null) continue
    ensureMinion(deps, k.minionId)
    // Accepting or rejecting moves the same key file; a key pending again, deleted or denied may be another key, so its
    // stored fingerprint goes and the keys poller asks for the new one.
    const sameKey = k.act === 'accept' || k.act === 'reject' ? 1 : 0
    db.query('UPDATE minions SET key_state = ?2, online = CASE WHEN ?2 IS NULL THEN 0 ELSE online END, key_fingerprint = CASE WHEN ?4 THEN key_fingerprint END, updated_at = ?3 WHERE id = ?1')
      .run(k.minionId, next, deps.clock.now(), sameKey)
    // A denied key (same id, other key) is stored as a state; the contract's key events are pend/accept/reject/delete.
    if (k.act === 'denied') continue
    out.push({ ts: k.ts, category: 'key', event_type: `key.${k.act}`, minion_id: k.minionId, initiator, summary: `${k.minionId} key ${KEY_WORD[k.act]}` })
  }
}

/**
 * Applies the complete key list: its keys as changes, and every stored key missing from it as deleted. The first list
 * of a new install (no key stored yet) records the keys as they are, without a "key accepted" (or rejected) event
 * each: those keys were not accepted now, and 5,000 such events would bury the feed (and fill every minion at once).
 * A pending key still says so: it waits for an operator.
 */
export function recordKeyList(deps: AppDeps, list: NonNullable<SaltFacts['keyList']>, out: EventInput[]) {
  const listed = new Set(list.keys.map((k) => k.minionId))
  const changes: KeyChange[] = list.keys.map((k) => ({ ...k, ts: list.ts }))
  const stored = deps.db.$client.query<{ id: string }, []>('SELECT id FROM minions WHERE key_state IS NOT NULL').all()
  for (const { id } of stored) if (!listed.has(id)) changes.push({ minionId: id, act: 'delete', ts: list.ts })
  if (stored.length) return recordKeyChanges(deps, changes, null, out)
  const first: EventInput[] = []
  recordKeyChanges(deps, changes, null, first)
  out.push(...first.filter((e) => e.event_type === 'key.pend'))
}

/** Stores key fingerprints; one counts only for a minion whose stored key is in the state the fingerprint was read in. */
export function recordKeyFingerprints(deps: AppDeps, fps: KeyFingerprint[]) {
  const q = deps.db.$client.query('UPDATE minions SET key_fingerprint = ?3 WHERE id = ?1 AND key_state = ?2 AND key_fingerprint IS NOT ?3')
  for (const f of fps) q.run(f.minionId, KEY_STATE[f.act], f.fingerprint)
}

/** A minion seen online (last_seen moves) or gone; minion.online/offline when that changes. */
export function recordPresence(deps: AppDeps, id: string, online: boolean, ts: number, out: EventInput[]) {
  const db = deps.db.$client
  const row = db.query<{ online: number }, [string]>('SELECT online FROM minions WHERE id = ?1').get(id)
  if (online) db.query('INSERT INTO minions (id, online, last_seen, updated_at) VALUES (?1, 1, ?2, ?2) ON CONFLICT (id) DO UPDATE SET online = 1, last_seen = max(coalesce(last_seen, 0), ?2), offline_since = NULL').run(id, ts)
  if (row && !!row.online === online) return
  if (!row && !online) return
  // offline_since is when it was first seen missing (the salt side sends no offline while the master does not answer),
  // not the last_seen a stopped master froze: minion_offline counts from here.
  if (!online) db.query('UPDATE minions SET online = 0, offline_since = ?2, updated_at = ?2 WHERE id = ?1').run(id, ts)
  out.push({ ts, category: 'minion', event_type: online ? 'minion.online' : 'minion.offline', minion_id: id, summary: `${id} ${online ? 'came online' : 'went offline'}` })
}

/** Applies a full present list: those listed are online, every other accepted minion is offline. */
export function recordPresentList(deps: AppDeps, list: NonNullable<SaltFacts['presentList']>, out: EventInput[]) {
  const present = new Set(list.ids)
  for (const id of list.ids) recordPresence(deps, id, true, list.ts, out)
  const online = deps.db.$client.query<{ id: string }, []>("SELECT id FROM minions WHERE online = 1 AND key_state = 'accepted'").all()
  for (const { id } of online) if (!present.has(id)) recordPresence(deps, id, false, list.ts, out)
}

/**
 * A minion start: one minion.start event however many times salt (or a replay) reports it. Any minion can fire a start
 * in another's name, so it is a claim: recorded only for a minion Saltdeck knows, and it changes no presence (the
 * presence poller, which the start hints at, says whether the minion is up).
 */
export function recordStart(deps: AppDeps, id: string, ts: number, out: EventInput[]) {
  const near = (e: EventInput) => e.event_type === 'minion.start' && e.minion_id === id && Math.abs(e.ts - ts) < START_DEDUPE_MS
  if (out.some(near) || startRecordedNear(deps, id, ts, START_DEDUPE_MS)) return
  if (!deps.db.$client.query<{ n: number }, [string]>('SELECT 1 AS n FROM minions WHERE id = ?1').get(id)) return
  out.push({ ts, category: 'minion', event_type: 'minion.start', minion_id: id, summary: `${id} started` })
}
