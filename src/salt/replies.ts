/** Reads runner and wheel replies (job cache, key list, presence) into salt facts. Pure: no database. */
import { parseStartTime, jidTime } from '../lib/salt-time'
import type { JobReturned, JobStarted, KeyAct, KeyFingerprint, MinionGrains, SaltFacts } from './facts'
import { JID, str, strList, targetText } from './normalize'

/** Job cache entries of the master's own bookkeeping and of runner/wheel calls: not minion jobs. */
const CACHE_NOISE = /^(runner\.|wheel\.)|^saltutil\.find_job$|^saltutil\.running$/

interface CacheEntry {
  Function?: unknown
  Target?: unknown
  'Target-type'?: unknown
  User?: unknown
  StartTime?: unknown
  Arguments?: unknown
}

/** The jobs of a runner `jobs.list_jobs` reply, noise left out; `keep` filters by function. */
export function cachedJobs(reply: unknown, now: number, keep: (fun: string) => boolean = () => true): JobStarted[] {
  const out: JobStarted[] = []
  for (const [jid, j] of Object.entries((reply ?? {}) as Record<string, CacheEntry>)) {
    // A minion can make the master cache a return under a jid of its choosing: only salt's own jids are jobs.
    if (!JID.test(jid)) continue
    const fun = str(j?.Function)
    if (!fun || CACHE_NOISE.test(fun) || !keep(fun)) continue
    const startedAt = parseStartTime(j.StartTime) ?? jidTime(jid) ?? now
    out.push({ jid, fun, target: targetText(j.Target), tgtType: str(j['Target-type']), user: str(j.User), arg: j.Arguments ?? null, minions: null, startedAt, ts: startedAt })
  }
  return out
}

/** A runner `jobs.list_job` reply: the job with its expected minions and the returns the cache holds; null when unknown. */
export function cachedJob(jid: string, reply: unknown, now: number): { job: JobStarted; returns: JobReturned[] } | null {
  const d = reply as { Function?: unknown; Minions?: unknown; Target?: unknown; 'Target-type'?: unknown; User?: unknown; Result?: Record<string, { return?: unknown; retcode?: unknown; success?: unknown }> } | null
  const fun = str(d?.Function)
  if (!d || !fun || !JID.test(jid)) return null
  const startedAt = jidTime(jid) ?? now
  const job: JobStarted = { jid, fun, target: targetText(d.Target), tgtType: str(d['Target-type']), user: str(d.User), arg: (d as { Arguments?: unknown }).Arguments, minions: strList(d.Minions), startedAt, ts: startedAt }
  const returns = Object.entries(d.Result ?? {}).map(([minionId, r]): JobReturned => ({
    jid, minionId, fun, ret: r?.return, retcode: typeof r?.retcode === 'number' ? r.retcode : null,
    success: typeof r?.success === 'boolean' ? r.success : null, ts: now, stampMs: null,
  }))
  return { job, returns }
}

/** A wheel `key.list_all` reply as the complete key list. */
export function keyList(reply: unknown, ts: number): NonNullable<SaltFacts['keyList']> {
  const r = (reply ?? {}) as Record<string, unknown>
  const want = new Map<string, KeyAct>()
  for (const id of strList(r.minions)) want.set(id, 'accept')
  for (const id of strList(r.minions_pre)) want.set(id, 'pend')
  for (const id of strList(r.minions_rejected)) want.set(id, 'reject')
  for (const id of strList(r.minions_denied)) want.set(id, 'denied')
  return { keys: [...want].map(([minionId, act]) => ({ minionId, act })), ts }
}

/** The key directories of salt's wheel key replies and the key state each one means. */
const KEY_DIRS = { minions: 'accept', minions_pre: 'pend', minions_rejected: 'reject', minions_denied: 'denied' } as const
/** A fingerprint longer than this is no fingerprint (sha512 in hex pairs is 191 characters). */
const MAX_FINGERPRINT = 256

/**
 * A wheel `key.finger` reply (`{minions_pre: {id: "aa:bb:…"}, minions: {…}, …}`) as fingerprints of the minions asked only;
 * the master's own keys (`local`) and anything that is not a short string are left out.
 */
export function keyFingerprints(reply: unknown, asked: Iterable<string>): KeyFingerprint[] {
  const want = new Set(asked)
  const r = reply && typeof reply === 'object' && !Array.isArray(reply) ? (reply as Record<string, unknown>) : {}
  const out: KeyFingerprint[] = []
  for (const [dir, act] of Object.entries(KEY_DIRS)) {
    const ids = r[dir]
    if (!ids || typeof ids !== 'object' || Array.isArray(ids)) continue
    for (const [minionId, fp] of Object.entries(ids as Record<string, unknown>))
      if (want.has(minionId) && typeof fp === 'string' && fp.length > 0 && fp.length <= MAX_FINGERPRINT) out.push({ minionId, act, fingerprint: fp })
  }
  return out
}

/** A minion id as a salt glob that matches that id alone: fnmatch's `*`, `?` and `[` each put in a class of their own. */
export const literalGlob = (id: string) => id.replace(/[*?[]/g, '[$&]')

/** The minions a presence runner reports up: `manage.present` answers a list, `manage.status` `{up, down}`. */
export function presentIds(reply: unknown, byStatus: boolean): string[] {
  return byStatus ? strList((reply as { up?: unknown } | null)?.up) : strList(reply)
}

/** The grains of a local `grains.items` reply, for the minions asked only. */
export function grainsOf(reply: unknown, asked: string[]): MinionGrains[] {
  const want = new Set(asked)
  return Object.entries((reply ?? {}) as Record<string, unknown>)
    .filter(([id, g]) => want.has(id) && !!g && typeof g === 'object' && !Array.isArray(g))
    .map(([id, g]) => ({ id, grains: g as Record<string, unknown> }))
}

/** The minions of a local `test.ping` reply that answered `true` (3006 gives silent minions `false`, 3008 a text). */
export function pingedIds(reply: unknown): string[] {
  return Object.entries((reply ?? {}) as Record<string, unknown>).filter(([, v]) => v === true).map(([id]) => id).sort()
}

/** The master's version from a runner `salt.cmd test.version` reply (a plain string). */
export function versionOf(reply: unknown): string | null {
  return typeof reply === 'string' && /^\d{4}/.test(reply) ? reply : null
}
