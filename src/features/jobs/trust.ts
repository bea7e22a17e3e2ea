/**
 * Which job returns from the event bus to believe (contract §17). Any minion can fire any tag onto the master's bus,
 * another minion's return included, so a return read from the bus is a claim: it is stored only when its job was
 * published to that minion (the minions of the job's `salt/job/<jid>/new`, or of salt-api's answer to a job Saltdeck
 * started). Any other return is held here, in memory and bounded, until salt's job cache (written by the master from
 * the authenticated return) confirms it; what is then stored is the cache's copy. The counts feed /metrics.
 */
import type { AppDeps } from '../../deps'
import type { Hint, JobReturned, JobStarted, Refusal } from '../../salt/facts'

/** Published jobs remembered (the newest); older ones' returns are confirmed through the job cache instead. */
const MAX_PUBLISHED = 20_000
/** Returns held at most; past that the oldest is dropped (counted as `overflow`). */
export const MAX_HELD = 1_000
/**
 * When a held return is looked up in the job cache, counted from when it was held; after the last try (about nine
 * minutes) it is dropped as `unconfirmed`. Salt writes the cache as it fires the return, so the first try usually settles it.
 */
export const CONFIRM_AFTER_MS = [2_000, 5_000, 15_000, 30_000, 60_000, 120_000, 300_000]
/** One warning line per reason per minute at most: a hostile minion must not flood the log. */
const LOG_EVERY_MS = 60_000

/** A return held until the job cache confirms it. */
export interface HeldReturn {
  jid: string
  minionId: string
  fun: string
  /** The schedule the return claimed to come from (a label only, applied when the cache confirms the return). */
  schedule: string | null
  heldAt: number
  tries: number
  nextAt: number
}

/** Why an event was not stored: the normaliser's reasons, and held returns given up. */
export type TrustRefusal = Refusal['reason'] | 'unconfirmed' | 'overflow'

class Ledger {
  published = new Map<string, { fun: string | null; minions: Set<string> }>()
  /** Held returns by `jid|minion`, oldest first, and the same by jid (the ingest asks per job). */
  held = new Map<string, HeldReturn>()
  byJid = new Map<string, Map<string, HeldReturn>>()
  refused: Record<TrustRefusal, number> = { jid: 0, forged: 0, unconfirmed: 0, overflow: 0 }
  hints: Record<Hint, number> = { keys: 0, presence: 0 }
  heldTotal = 0
  confirmedTotal = 0
  loggedAt = new Map<string, number>()
}

const ledgers = new WeakMap<AppDeps, Ledger>()
const ledger = (deps: AppDeps) => {
  let l = ledgers.get(deps)
  if (!l) ledgers.set(deps, (l = new Ledger()))
  return l
}
const key = (jid: string, minionId: string) => `${jid}|${minionId}`

/** Logs one refusal or hold, at most once a minute per reason; the fields are bounded and escaped by the logger. */
function note(deps: AppDeps, what: string, fields: Record<string, unknown>) {
  const l = ledger(deps)
  const now = deps.clock.now()
  if (now - (l.loggedAt.get(what) ?? -Infinity) < LOG_EVERY_MS) return
  l.loggedAt.set(what, now)
  deps.log.warn(`salt event ${what}`, { ...fields, refused: { ...l.refused }, held: l.held.size })
}

/** Remembers the minions a job was published to (from its `new` event, or salt-api's answer to Saltdeck's publish). */
export function notePublished(deps: AppDeps, jid: string, fun: string | null, minions: Iterable<string>) {
  const p = ledger(deps).published
  const had = p.get(jid)
  const set = had?.minions ?? new Set<string>()
  for (const m of minions) set.add(m)
  p.delete(jid)
  p.set(jid, { fun: had?.fun ?? fun, minions: set })
  if (p.size > MAX_PUBLISHED) p.delete(p.keys().next().value!)
}

/** Remembers the published jobs among these facts. */
export function notePublishedJobs(deps: AppDeps, jobs: JobStarted[]) {
  for (const j of jobs) if (j.published && j.minions) notePublished(deps, j.jid, j.fun, j.minions)
}

/** The returns from the bus that may be stored now; the rest are held for the job cache to confirm. */
export function trustedReturns(deps: AppDeps, returns: JobReturned[]): JobReturned[] {
  const l = ledger(deps)
  const out: JobReturned[] = []
  for (const r of returns) {
    const p = l.published.get(r.jid)
    if (p?.minions.has(r.minionId) && (p.fun === null || p.fun === r.fun)) {
      out.push(r)
      continue
    }
    const k = key(r.jid, r.minionId)
    if (l.held.has(k)) continue
    const now = deps.clock.now()
    const h: HeldReturn = { jid: r.jid, minionId: r.minionId, fun: r.fun, schedule: r.schedule ?? null, heldAt: now, tries: 0, nextAt: now + CONFIRM_AFTER_MS[0]! }
    l.held.set(k, h)
    let of = l.byJid.get(r.jid)
    if (!of) l.byJid.set(r.jid, (of = new Map()))
    of.set(r.minionId, h)
    l.heldTotal++
    note(deps, 'return held until the job cache confirms it', { jid: r.jid, minion_id: r.minionId, fun: r.fun })
    if (l.held.size > MAX_HELD) {
      drop(l, l.held.values().next().value!)
      l.refused.overflow++
      note(deps, 'held return dropped: too many held', { max: MAX_HELD })
    }
  }
  return out
}

/** Forgets one held return. */
function drop(l: Ledger, h: HeldReturn): boolean {
  if (!l.held.delete(key(h.jid, h.minionId))) return false
  const of = l.byJid.get(h.jid)
  of?.delete(h.minionId)
  if (of && !of.size) l.byJid.delete(h.jid)
  return true
}

const NONE: ReadonlyMap<string, HeldReturn> = new Map()
/** The held returns of a job, by minion id (a schedule claim travels with them). */
export function heldOf(deps: AppDeps, jid: string): ReadonlyMap<string, HeldReturn> {
  return ledger(deps).byJid.get(jid) ?? NONE
}

/** Clears the held entries of returns just stored; returns how many it cleared. */
export function confirmHeld(deps: AppDeps, stored: { jid: string; minionId: string }[]): number {
  const l = ledger(deps)
  let n = 0
  for (const r of stored) {
    const h = l.byJid.get(r.jid)?.get(r.minionId)
    if (h && drop(l, h)) n++
  }
  l.confirmedTotal += n
  return n
}

/** The jids whose held returns are due for a job cache lookup at `now`, oldest first, at most `limit`. */
export function dueJids(deps: AppDeps, now: number, limit: number): string[] {
  const jids = new Set<string>()
  for (const h of ledger(deps).held.values()) {
    if (h.nextAt <= now) jids.add(h.jid)
    if (jids.size >= limit) break
  }
  return [...jids]
}

/** After a lookup of `jid`: each of its returns still held waits for its next try, or is dropped after the last. */
export function lookedUp(deps: AppDeps, jid: string, now: number) {
  const l = ledger(deps)
  for (const h of [...(l.byJid.get(jid)?.values() ?? [])]) {
    if (h.nextAt > now) continue
    h.tries++
    const after = CONFIRM_AFTER_MS[h.tries]
    if (after !== undefined) {
      h.nextAt = h.heldAt + after
      continue
    }
    drop(l, h)
    l.refused.unconfirmed++
    note(deps, 'held return dropped: the job cache never confirmed it', { jid: h.jid, minion_id: h.minionId, fun: h.fun })
  }
}

/** Counts the normaliser's refusals, and logs them (bounded). */
export function countRefusals(deps: AppDeps, refused: Refusal[]) {
  const l = ledger(deps)
  for (const r of refused) {
    l.refused[r.reason]++
    note(deps, `refused (${r.reason})`, { reason: r.reason, tag: r.tag })
  }
}

/** Counts the hints read from the bus. */
export function countHints(deps: AppDeps, hints: Hint[]) {
  const l = ledger(deps)
  for (const h of hints) l.hints[h]++
}

/** The counts for /metrics. */
export function trustStats(deps: AppDeps) {
  const l = ledger(deps)
  return { refused: { ...l.refused }, hints: { ...l.hints }, held: l.held.size, heldTotal: l.heldTotal, confirmedTotal: l.confirmedTotal }
}
