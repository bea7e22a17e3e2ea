/**
 * Turns one salt event (tag + data) into salt facts: jobs started, returns, key and presence changes, minion starts.
 * Pure: no database; what to store of them is decided by the features.
 */
import { parseStamp, jidTime } from '../lib/salt-time'
import { noFacts, type Refusal, type SaltFacts } from './facts'

// The jid part takes anything (slashes and newlines too), so a malformed jid is seen and refused, not passed over.
const JOB_NEW = /^salt\/job\/(.+)\/new$/s
const JOB_RET = /^salt\/job\/(.+)\/ret\/([^/]+)$/s
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

/** A salt jid: twenty digits (salt.utils.jid.gen_jid). Anything else in a job tag is refused, so no minion-made text reaches a jid. */
export const JID = /^\d{20}$/

/**
 * The data of an event a minion sent in one piece (`event.fire_master` with a preload, or a minion's own start): salt
 * fires the minion's whole request, so it carries the request's `cmd`. The master's own publish and key events never do,
 * and salt's tag blacklist does not apply to this form, so a `new` or `salt/key` event carrying it is a minion's forgery.
 */
const fromMinionRequest = (data: Record<string, unknown>) => data.cmd === '_minion_event'

/** Normalises one event; `now` is the time of receipt. The facts are claims (`bus`): the features decide what to trust. */
export function normalize(tag: string, data: Record<string, unknown>, now: number): SaltFacts {
  const out: SaltFacts = { ...noFacts(), bus: true }
  const refuse = (reason: Refusal['reason']) => ((out.refused = [{ reason, tag: tag.slice(0, 200) }]), out)
  const stampMs = parseStamp(data._stamp, now)
  const ts = stampMs ?? now
  let m: RegExpExecArray | null
  if ((m = JOB_NEW.exec(tag))) {
    const fun = str(data.fun)
    const jid = m[1]!
    if (!JID.test(jid) || (data.jid !== undefined && data.jid !== jid)) return refuse('jid')
    if (fromMinionRequest(data)) return refuse('forged')
    if (!fun || NOISE_FUNS.has(fun)) return out
    out.jobs.push({
      jid, fun, target: targetText(data.tgt), tgtType: str(data.tgt_type), user: str(data.user), arg: data.arg ?? null,
      minions: strList(data.minions), startedAt: jidTime(jid) ?? ts, ts, published: true,
    })
    return out
  }
  if ((m = JOB_RET.exec(tag))) {
    const jid = m[1]!
    const minionId = m[2]!
    if (!JID.test(jid) || (data.jid !== undefined && data.jid !== jid)) return refuse('jid')
    // The tag names the minion; a request a minion sent in one piece carries its sender in `id`, so the two must agree.
    if (fromMinionRequest(data) || (data.id !== undefined && data.id !== minionId)) return refuse('forged')
    const fun = str(data.fun)
    if (!fun || NOISE_FUNS.has(fun)) return out
    // An integer or nothing: a minion's float or huge retcode would not fit the column (PostgreSQL bigint refuses 1.5).
    const retcode = Number.isSafeInteger(data.retcode) ? (data.retcode as number) : null
    const success = typeof data.success === 'boolean' ? data.success : null
    // A minion's own schedule (return_job) publishes no job: its return names the schedule, and the job cache holds the job.
    out.returns.push({ jid, minionId, fun, ret: data.return, retcode, success, ts, stampMs, funArgs: data.fun_args, schedule: str(data.schedule) })
    return out
  }
  if (tag === 'salt/key') {
    if (fromMinionRequest(data)) return refuse('forged')
    const id = str(data.id)
    const act = str(data.act)
    if (id && (act === 'pend' || act === 'accept' || act === 'reject' || act === 'delete')) out.keys.push({ minionId: id, act, ts })
    return out
  }
  // Minions can fire these: they only make Saltdeck ask salt (the keys or presence poller), never change state.
  if (tag === 'salt/auth') return (out.hints = ['keys']), out
  if (tag === 'salt/presence/change' || tag === 'salt/presence/present') return (out.hints = ['presence']), out
  if ((m = MINION_START.exec(tag)) || tag === 'minion_start') {
    const id = str(data.id) ?? m?.[1] ?? null
    if (m && data.id !== undefined && data.id !== m[1]) return refuse('forged')
    out.hints = ['presence']
    if (id) out.starts.push({ minionId: id, ts })
    return out
  }
  return out
}
