/**
 * Salt's key, presence and start facts into the minion rows (the one writer of key_state, key_fingerprint, online,
 * last_seen and offline_since) and
 * their activity events. Each change is compared with the stored state, so a poller repeating what the stream said
 * records nothing twice.
 */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import type { KeyChange, KeyFingerprint, SaltFacts } from '../../salt/facts'
import { startRecordedNear, type EventInput } from '../activity/service'
import {
  idsWithAnyKey, insertMinion, keyStateOf, markMissing, markSeen, markSeenMany, minionExists, onlineAccepted, onlineOf, onlineOfMany, setFingerprint, setKeyState,
} from './store'
import { seenElsewhere } from './sources-store'

const KEY_STATE = { pend: 'pending', accept: 'accepted', reject: 'rejected', delete: null, denied: 'denied' } as const
const KEY_WORD = { pend: 'is pending', accept: 'accepted', reject: 'rejected', delete: 'deleted', denied: 'denied' } as const
/** Two start events of one minion this close together are one start (salt sends the legacy tag too). */
const START_DEDUPE_MS = 10_000

/** Applies key changes in `tx`; key.* events for real changes, with the acting user when the change was made through Saltdeck. */
export async function recordKeyChanges(deps: AppDeps, tx: Queryable, keys: KeyChange[], initiator: string | null, out: EventInput[]) {
  for (const k of keys) {
    const row = await keyStateOf(tx, k.minionId)
    const next = KEY_STATE[k.act]
    if (row && row.key_state === next) continue
    if (!row && next === null) continue
    const now = deps.clock.now()
    if (!row) await insertMinion(tx, k.minionId, now)
    // Accepting or rejecting moves the same key file; a key pending again, deleted or denied may be another key, so its
    // stored fingerprint goes and the keys poller asks for the new one.
    await setKeyState(tx, k.minionId, next, k.act === 'accept' || k.act === 'reject', now)
    // A denied key (same id, other key) is stored as a state; the contract's key events are pend/accept/reject/delete.
    if (k.act === 'denied') continue
    out.push({ ts: k.ts, category: 'key', event_type: `key.${k.act}`, minion_id: k.minionId, initiator, summary: `${k.minionId} key ${KEY_WORD[k.act]}` })
  }
}

/**
 * Applies the complete key list in `tx`: its keys as changes, and every stored key missing from it as deleted. The
 * first list of a new install (no key stored yet) records the keys as they are, without a "key accepted" (or rejected)
 * event each: those keys were not accepted now, and 5,000 such events would bury the feed (and fill every minion at
 * once). A pending key still says so: it waits for an operator.
 */
export async function recordKeyList(deps: AppDeps, tx: Queryable, list: NonNullable<SaltFacts['keyList']>, out: EventInput[], source = 'default') {
  const listed = new Set(list.keys.map((k) => k.minionId))
  const changes: KeyChange[] = list.keys.map((k) => ({ ...k, ts: list.ts }))
  const stored = await idsWithAnyKey(tx)
  // One master's list speaks only for the minions no other salt source has seen: another master may hold their key.
  const elsewhere = await seenElsewhere(tx, source)
  for (const id of stored) if (!listed.has(id) && !elsewhere.has(id)) changes.push({ minionId: id, act: 'delete', ts: list.ts })
  if (stored.length) return recordKeyChanges(deps, tx, changes, null, out)
  const first: EventInput[] = []
  await recordKeyChanges(deps, tx, changes, null, first)
  out.push(...first.filter((e) => e.event_type === 'key.pend'))
}

/** Stores key fingerprints in `tx`; one counts only for a minion whose stored key is in the state the fingerprint was read in. */
export async function recordKeyFingerprints(_deps: AppDeps, tx: Queryable, fps: KeyFingerprint[]) {
  for (const f of fps) await setFingerprint(tx, f.minionId, KEY_STATE[f.act], f.fingerprint)
}

/** A minion seen online (last_seen moves) or gone, in `tx`; minion.online/offline when that changes. */
export async function recordPresence(_deps: AppDeps, tx: Queryable, id: string, online: boolean, ts: number, out: EventInput[]) {
  const row = await onlineOf(tx, id)
  if (online) await markSeen(tx, id, ts)
  if (row && !!row.online === online) return
  if (!row && !online) return
  // offline_since is when it was first seen missing (the salt side sends no offline while the master does not answer),
  // not the last_seen a stopped master froze: minion_offline counts from here.
  if (!online) await markMissing(tx, id, ts)
  out.push({ ts, category: 'minion', event_type: online ? 'minion.online' : 'minion.offline', minion_id: id, summary: `${id} ${online ? 'came online' : 'went offline'}` })
}

/**
 * Applies a full present list in `tx`: those listed are online, every other accepted minion is offline. The listed
 * are read and marked seen a slice at a time (one statement per 500, not two per minion: 50,000 minions come in one
 * list), then minion.online is said for each that was not online, in the list's order.
 */
export async function recordPresentList(deps: AppDeps, tx: Queryable, list: NonNullable<SaltFacts['presentList']>, out: EventInput[], source = 'default') {
  const present = new Set(list.ids)
  const ids = [...present]
  const before = await onlineOfMany(tx, ids)
  await markSeenMany(tx, ids, list.ts)
  for (const id of ids)
    if (before.get(id) !== 1) out.push({ ts: list.ts, category: 'minion', event_type: 'minion.online', minion_id: id, summary: `${id} came online` })
  // Missing from one master's list is offline only for a minion no other salt source has seen (see README "Several masters").
  const elsewhere = await seenElsewhere(tx, source)
  for (const id of await onlineAccepted(tx)) if (!present.has(id) && !elsewhere.has(id)) await recordPresence(deps, tx, id, false, list.ts, out)
}

/**
 * A minion start: one minion.start event however many times salt (or a replay) reports it. Any minion can fire a start
 * in another's name, so it is a claim: recorded only for a minion Saltdeck knows, and it changes no presence (the
 * presence poller, which the start hints at, says whether the minion is up).
 */
export async function recordStart(_deps: AppDeps, tx: Queryable, id: string, ts: number, out: EventInput[]) {
  const near = (e: EventInput) => e.event_type === 'minion.start' && e.minion_id === id && Math.abs(e.ts - ts) < START_DEDUPE_MS
  if (out.some(near) || (await startRecordedNear(tx, id, ts, START_DEDUPE_MS))) return
  if (!(await minionExists(tx, id))) return
  out.push({ ts, category: 'minion', event_type: 'minion.start', minion_id: id, summary: `${id} started` })
}
