/**
 * The instances on this database (contract §15): each running service writes its row on a heartbeat with what it
 * leads; rows not seen for a minute are no longer listed (an instance killed outright leaves its row behind).
 */
import { hostname } from 'node:os'
import type { AppDeps, SaltHealthSnapshot } from '../../deps'
import { iso } from '../../lib/clock'
import { VERSION } from '../../version'
import { deleteInstance, instancesSeenSince, setLeads, upsertInstance } from './store'

/** Milliseconds after its last heartbeat that an instance is no longer listed. */
export const INSTANCE_GONE_MS = 60_000
/**
 * Milliseconds after its last heartbeat that an instance's leads are no longer shown: a leader that died has lost its
 * locks with its connection, and its successor is listed as leading within the 15 s of a takeover.
 */
export const LEADS_STALE_MS = 15_000
/** Rows older than this are deleted by any instance's stop. */
const FORGET_MS = 86_400_000

/** This process as an instance: its id and start. */
export interface Me {
  id: string
  startedAt: number
}

/**
 * Writes this instance's row now, with the names it leads and the salt side's state of each source among them. A name
 * it holds is no other row's: a leader that died or lost its lock still claims it in its row, which it no longer
 * writes, so the holder takes the claim off that row.
 */
export async function heartbeat(deps: AppDeps, me: Me, leads: string[], health: Record<string, SaltHealthSnapshot> = {}) {
  const now = deps.clock.now()
  await upsertInstance(deps.db, {
    id: me.id, hostname: hostname(), version: VERSION, engine: deps.db.engine, started_at: me.startedAt, last_seen_at: now, leads: JSON.stringify(leads),
    health: Object.keys(health).length ? JSON.stringify(health) : null,
  })
  if (!leads.length) return
  for (const r of await instancesSeenSince(deps.db, now - INSTANCE_GONE_MS)) {
    if (r.id === me.id) continue
    const theirs = JSON.parse(r.leads) as string[]
    const left = theirs.filter((name) => !leads.includes(name))
    if (left.length !== theirs.length) await setLeads(deps.db, r.id, JSON.stringify(left))
  }
}

/** Removes this instance's row at a graceful stop (and rows long gone). */
export const forgetInstance = (deps: AppDeps, me: Me) => deleteInstance(deps.db, me.id, deps.clock.now() - FORGET_MS)

/** The rows seen within the last minute, and what each leads now (its claims no later row took, while it is fresh). */
async function seenWithLeads(deps: AppDeps) {
  const now = deps.clock.now()
  const rows = await instancesSeenSince(deps.db, now - INSTANCE_GONE_MS)
  // A name two rows claim was handed over (a leader died or lost its lock and has not written since): the most
  // recently seen row holds it.
  const holder = new Map<string, { id: string; seen: number }>()
  for (const r of rows)
    for (const name of JSON.parse(r.leads) as string[]) if ((holder.get(name)?.seen ?? -1) < r.last_seen_at) holder.set(name, { id: r.id, seen: r.last_seen_at })
  const leadsOf = (r: (typeof rows)[number]) =>
    r.last_seen_at >= now - LEADS_STALE_MS ? (JSON.parse(r.leads) as string[]).filter((name) => holder.get(name)?.id === r.id) : []
  return { rows, leadsOf }
}

/** The instance leading a salt source as Salt health names it, with its salt side's state as of its last heartbeat. */
export interface LeaderView {
  id: string
  hostname: string
  /** Its snapshot of the source (null when it wrote none: an older build, or its first heartbeat is under way). */
  health: SaltHealthSnapshot | null
  /** When it wrote it (epoch ms). */
  seenAt: number
}

/** The leader of each salt source now, by source name (sources nobody leads are absent). */
export async function leaderViews(deps: AppDeps): Promise<Map<string, LeaderView>> {
  const { rows, leadsOf } = await seenWithLeads(deps)
  const views = new Map<string, LeaderView>()
  for (const r of rows) {
    let health: Record<string, SaltHealthSnapshot> = {}
    try {
      health = r.health ? JSON.parse(r.health) : {}
    } catch {
      // A row another build wrote in another shape: its leads still count.
    }
    for (const name of leadsOf(r)) views.set(name, { id: r.id, hostname: r.hostname, health: health[name] ?? null, seenAt: r.last_seen_at })
  }
  return views
}

/** GET /api/cluster's body: instances seen within the last minute. */
export async function listInstances(deps: AppDeps) {
  const { rows, leadsOf } = await seenWithLeads(deps)
  return {
    instances: rows.map((r) => ({
      id: r.id, hostname: r.hostname, version: r.version, engine: r.engine as 'sqlite' | 'postgres',
      started_at: iso(r.started_at), last_seen_at: iso(r.last_seen_at), leads: leadsOf(r),
    })),
  }
}
