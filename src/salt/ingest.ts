/**
 * Applies normalised salt intents in one transaction: job index, returns, runs, key and presence changes and
 * activity events. Shared by the event stream and the pollers so both store the same facts the same way.
 */
import type { AppDeps } from '../deps'
import { recordEvents, type EventInput, type EventOut } from '../features/activity/service'
import { recordJobReturns, returnKey, upsertJobs } from '../features/jobs/service'
import { recordRun } from '../features/runs/service'
import { ensureMinion } from '../features/minions/service'
import type { Intents, KeyChange } from './normalize'

const KEY_STATE = { pend: 'pending', accept: 'accepted', reject: 'rejected', delete: null, denied: 'denied' } as const
const KEY_WORD = { pend: 'is pending', accept: 'accepted', reject: 'rejected', delete: 'deleted', denied: 'denied' } as const
/** Two start events of one minion this close together are one start (salt sends the legacy tag too). */
const START_DEDUPE_MS = 10_000

/** Applies intents and tells listeners about the activity events it stored. */
export class Ingestor {
  private listeners = new Set<(events: EventOut[]) => void>()
  /** Activity events stored since start, from the stream and the pollers alike (for /metrics). */
  stored = 0

  constructor(private deps: AppDeps) {}

  /** Subscribes to stored events; returns the unsubscribe function. */
  onEvents(fn: (events: EventOut[]) => void) {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Applies a batch in one transaction; returns the activity events stored (duplicates left out). */
  apply(batch: Intents[], initiator: string | null = null): EventOut[] {
    const db = this.deps.db.$client
    let stored: EventOut[] = []
    db.transaction(() => {
      const events: EventInput[] = []
      const jobCache = new Map<string, { user: string | null; target: string | null } | null>()
      // A job event lands with what it reports: job.new with a job not known before, job.ret with a new return.
      const newJobs = new Set(upsertJobs(this.deps, batch.flatMap((b) => b.jobs)))
      const newReturns = recordJobReturns(this.deps, batch.flatMap((b) => b.returns))
      const fresh = (e: EventInput) =>
        e.event_type === 'job.new' ? newJobs.delete(e.jid!) : e.event_type === 'job.ret' ? newReturns.delete(returnKey(e.jid!, e.minion_id!)) : true
      for (const r of batch.flatMap((b) => b.runs)) recordRun(this.deps, r)
      for (const b of batch) {
        for (const k of b.keys) this.key(k, initiator, events)
        for (const p of b.presence) this.presence(p.minionId, p.online, p.ts, events)
        if (b.presentList) this.presentList(b.presentList.ids, b.presentList.ts, events)
        for (const s of b.starts) this.start(s.minionId, s.ts, events)
        for (const e of b.events) if (fresh(e)) events.push(this.withJob(e, jobCache))
      }
      events.sort((a, b) => a.ts - b.ts)
      stored = recordEvents(this.deps, events)
    })()
    this.stored += stored.length
    if (stored.length) for (const l of this.listeners) l(stored)
    return stored
  }

  // job.ret events carry the initiator and target of their job when the job is known.
  private withJob(e: EventInput, cache: Map<string, { user: string | null; target: string | null } | null>): EventInput {
    if (e.event_type !== 'job.ret' || !e.jid || (e.initiator && e.target)) return e
    let j = cache.get(e.jid)
    if (j === undefined) cache.set(e.jid, (j = this.deps.db.$client.query<{ user: string | null; target: string | null }, [string]>('SELECT user, target FROM jobs WHERE jid = ?1').get(e.jid)))
    return j ? { ...e, initiator: e.initiator ?? j.user, target: e.target ?? j.target } : e
  }

  private key(k: KeyChange, initiator: string | null, events: EventInput[]) {
    const db = this.deps.db.$client
    const row = db.query<{ key_state: string | null }, [string]>('SELECT key_state FROM minions WHERE id = ?1').get(k.minionId)
    const next = KEY_STATE[k.act]
    if (row && row.key_state === next) return
    if (!row && next === null) return
    ensureMinion(this.deps, k.minionId)
    db.query('UPDATE minions SET key_state = ?2, online = CASE WHEN ?2 IS NULL THEN 0 ELSE online END, updated_at = ?3 WHERE id = ?1').run(k.minionId, next, this.deps.clock.now())
    // A denied key (same id, other key) is stored as a state; the contract's key events are pend/accept/reject/delete.
    if (k.act === 'denied') return
    events.push({ ts: k.ts, category: 'key', event_type: `key.${k.act}`, minion_id: k.minionId, initiator, summary: `${k.minionId} key ${KEY_WORD[k.act]}` })
  }

  private presence(id: string, online: boolean, ts: number, events: EventInput[]) {
    const db = this.deps.db.$client
    const row = db.query<{ online: number }, [string]>('SELECT online FROM minions WHERE id = ?1').get(id)
    if (online) db.query('INSERT INTO minions (id, online, last_seen, updated_at) VALUES (?1, 1, ?2, ?2) ON CONFLICT (id) DO UPDATE SET online = 1, last_seen = max(coalesce(last_seen, 0), ?2)').run(id, ts)
    if (row && !!row.online === online) return
    if (!row && !online) return
    if (!online) db.query('UPDATE minions SET online = 0, updated_at = ?2 WHERE id = ?1').run(id, ts)
    events.push({ ts, category: 'minion', event_type: online ? 'minion.online' : 'minion.offline', minion_id: id, summary: `${id} ${online ? 'came online' : 'went offline'}` })
  }

  private presentList(ids: string[], ts: number, events: EventInput[]) {
    const present = new Set(ids)
    for (const id of ids) this.presence(id, true, ts, events)
    const online = this.deps.db.$client.query<{ id: string }, []>("SELECT id FROM minions WHERE online = 1 AND key_state = 'accepted'").all()
    for (const { id } of online) if (!present.has(id)) this.presence(id, false, ts, events)
  }

  private start(id: string, ts: number, events: EventInput[]) {
    // Salt sends salt/minion/<id>/start and the legacy minion_start for one start; a replay sends them again.
    const near = (e: { minion_id?: string | null; ts: number; event_type: string }) => e.event_type === 'minion.start' && e.minion_id === id && Math.abs(e.ts - ts) < START_DEDUPE_MS
    if (events.some(near)) return
    const stored = this.deps.db.$client.query("SELECT 1 FROM activity_events WHERE minion_id = ?1 AND ts > ?2 AND ts < ?3 AND event_type = 'minion.start' LIMIT 1")
      .get(id, ts - START_DEDUPE_MS, ts + START_DEDUPE_MS)
    if (stored) return
    this.presence(id, true, ts, events)
    events.push({ ts, category: 'minion', event_type: 'minion.start', minion_id: id, summary: `${id} started` })
  }
}
