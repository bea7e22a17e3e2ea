/**
 * Turns one salt event (tag + data) into salt facts: jobs started, returns, key and presence changes, minion starts.
 * Pure: no database; what to store of them is decided by the features.
 */
import { parseStamp, jidTime } from '../lib/salt-time'
import { noFacts, type SaltFacts } from './facts'

const JOB_NEW = /^salt\/job\/([^/]+)\/new$/
const JOB_RET = /^salt\/job\/([^/]+)\/ret\/(.+)$/
const MINION_START = /^salt\/minion\/(.+)\/start$/
/** Internal jobs the master runs for its own bookkeeping; never facts of interest. */
const NOISE_FUNS = new Set(['saltutil.find_job', 'saltutil.running', 'saltutil.sync_all', 'mine.update'])

/** The initiator of a job a minion's own schedule ran (contract §13: `schedule`). */
export const SCHEDULE_USER = 'schedule'

/** A string value, or null. */
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)
/** The strings of a list value (anything else: none). */
export const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
/** A job target as one text: a list target is joined with commas. */
export const targetText = (tgt: unknown) => (Array.isArray(tgt) ? tgt.join(',') : typeof tgt === 'string' ? tgt : null)

/** Normalises one event; `now` is the time of receipt. */
export function normalize(tag: string, data: Record<string, unknown>, now: number): SaltFacts {
  const out = noFacts()
  const stampMs = parseStamp(data._stamp, now)
  const ts = stampMs ?? now
  let m: RegExpExecArray | null
  if ((m = JOB_NEW.exec(tag))) {
    const fun = str(data.fun)
    if (!fun || NOISE_FUNS.has(fun)) return out
    const jid = str(data.jid) ?? m[1]!
    out.jobs.push({
      jid, fun, target: targetText(data.tgt), tgtType: str(data.tgt_type), user: str(data.user), arg: data.arg ?? null,
      minions: strList(data.minions), startedAt: jidTime(jid) ?? ts, ts,
    })
    return out
  }
  if ((m = JOB_RET.exec(tag))) {
    const fun = str(data.fun)
    if (!fun || NOISE_FUNS.has(fun)) return out
    const retcode = typeof data.retcode === 'number' ? data.retcode : null
    const success = typeof data.success === 'boolean' ? data.success : null
    const jid = str(data.jid) ?? m[1]!
    const minionId = str(data.id) ?? m[2]!
    // A minion's own schedule (return_job) publishes no job: its return names the schedule, and is the job's only trace.
    if (str(data.schedule))
      out.jobs.push({ jid, fun, target: minionId, tgtType: 'list', user: SCHEDULE_USER, arg: data.fun_args ?? null, minions: [minionId], startedAt: jidTime(jid) ?? ts, ts })
    out.returns.push({ jid, minionId, fun, ret: data.return, retcode, success, ts, stampMs, funArgs: data.fun_args })
    return out
  }
  if (tag === 'salt/auth' || tag === 'salt/key') {
    const id = str(data.id)
    const act = str(data.act)
    if (id && (act === 'pend' || act === 'accept' || act === 'reject' || act === 'delete')) out.keys.push({ minionId: id, act, ts })
    return out
  }
  if ((m = MINION_START.exec(tag)) || tag === 'minion_start') {
    const id = str(data.id) ?? m?.[1] ?? null
    if (id) out.starts.push({ minionId: id, ts })
    return out
  }
  if (tag === 'salt/presence/change') {
    for (const id of strList(data.new)) out.presence.push({ minionId: id, online: true, ts })
    for (const id of strList(data.lost)) out.presence.push({ minionId: id, online: false, ts })
    return out
  }
  if (tag === 'salt/presence/present') {
    out.presentList = { ids: strList(data.present), ts }
    return out
  }
  return out
}
