/**
 * Turns one salt event (tag + data) into what Saltdeck stores (contract §6): job index entries, job returns,
 * runs, activity events, key and presence facts. Pure: no database; the ingest step compares with stored state.
 */
import type { EventInput } from '../features/activity/service'
import type { JobInput, JobReturnInput } from '../features/jobs/service'
import type { RawRun } from '../features/runs/service'
import { parseStamp, jidTime } from '../lib/salt-time'
import { countRun, isStateDict } from './returns'

/** A key state change reported by salt. */
export interface KeyChange {
  minionId: string
  act: 'pend' | 'accept' | 'reject' | 'delete' | 'denied'
  ts: number
}

/** What one event asks the ingest step to do. */
export interface Intents {
  jobs: JobInput[]
  returns: JobReturnInput[]
  runs: RawRun[]
  events: EventInput[]
  keys: KeyChange[]
  /** Minions seen online / offline, with the time. */
  presence: { minionId: string; online: boolean; ts: number }[]
  /** A full present list (salt/presence/present): every other accepted minion is offline. */
  presentList?: { ids: string[]; ts: number }
  /** Minion starts, de-duplicated by the ingest step (legacy minion_start repeats salt/minion/<id>/start). */
  starts: { minionId: string; ts: number }[]
}

/** An empty set of intents. */
export const noIntents = (): Intents => ({ jobs: [], returns: [], runs: [], events: [], keys: [], presence: [], starts: [] })

const JOB_NEW = /^salt\/job\/([^/]+)\/new$/
const JOB_RET = /^salt\/job\/([^/]+)\/ret\/(.+)$/
const MINION_START = /^salt\/minion\/(.+)\/start$/
/** Internal jobs the master runs for its own bookkeeping; never shown as activity. */
const NOISE_FUNS = new Set(['saltutil.find_job', 'saltutil.running', 'saltutil.sync_all', 'mine.update'])

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const targetText = (tgt: unknown) => (Array.isArray(tgt) ? tgt.join(',') : typeof tgt === 'string' ? tgt : null)

/** Summary counts and flags of a job return, shared by the stream and the pollers' backfill. */
export function describeReturn(minionId: string, fun: string, ret: unknown, runFuns: Set<string>) {
  const stateResult = isStateDict(ret)
  const c = countRun(ret)
  const changed = stateResult ? c.change_count > 0 : null
  const durationMs = stateResult && c.total_count > 0 ? c.duration_ms : null
  const summary = runFuns.has(fun) && !c.blocked
    ? `${minionId} returned ${fun}: ${c.pass_count} ok, ${c.fail_count} failed, ${c.change_count} changed`
    : `${minionId} returned ${fun}`
  return { changed, durationMs, summary }
}

/** One job return as stored everywhere (job return, job.ret event, run). */
export function returnIntents(out: Intents, r: { jid: string; minionId: string; fun: string; ret: unknown; retcode: number | null; success: boolean | null; ts: number; stampMs: number | null }, runFuns: Set<string>) {
  const success = r.retcode !== null ? r.retcode === 0 : r.success
  const d = describeReturn(r.minionId, r.fun, r.ret, runFuns)
  out.returns.push({ jid: r.jid, minionId: r.minionId, success, retcode: r.retcode, ret: r.ret, receivedAt: r.ts })
  out.events.push({
    ts: r.ts, category: 'job', event_type: 'job.ret', minion_id: r.minionId, jid: r.jid, fun: r.fun, success,
    changed: d.changed, duration_ms: d.durationMs, summary: d.summary,
  })
  if (runFuns.has(r.fun)) out.runs.push({ minionId: r.minionId, jid: r.jid, fun: r.fun, ret: r.ret, stampMs: r.stampMs, jobStartMs: jidTime(r.jid) })
}

/** The summary of a job.new event. */
export const dispatchSummary = (fun: string, target: string | null, minions: number) =>
  `${fun} dispatched to ${target ?? 'unknown target'} (${minions} minion${minions === 1 ? '' : 's'})`

/** Normalises one event; `now` is the time of receipt. */
export function normalize(tag: string, data: Record<string, unknown>, now: number, runFuns: Set<string>): Intents {
  const out = noIntents()
  const stampMs = parseStamp(data._stamp, now)
  const ts = stampMs ?? now
  let m: RegExpExecArray | null
  if ((m = JOB_NEW.exec(tag))) {
    const fun = str(data.fun)
    if (!fun || NOISE_FUNS.has(fun)) return out
    const jid = str(data.jid) ?? m[1]!
    const minions = strList(data.minions)
    const target = targetText(data.tgt)
    const user = str(data.user)
    out.jobs.push({ jid, fun, target, tgtType: str(data.tgt_type), user, arg: data.arg ?? null, minions, startedAt: jidTime(jid) ?? ts })
    out.events.push({ ts, category: 'job', event_type: 'job.new', jid, fun, target, initiator: user, summary: dispatchSummary(fun, target, minions.length) })
    return out
  }
  if ((m = JOB_RET.exec(tag))) {
    const fun = str(data.fun)
    if (!fun || NOISE_FUNS.has(fun)) return out
    const jid = str(data.jid) ?? m[1]!
    const minionId = str(data.id) ?? m[2]!
    const retcode = typeof data.retcode === 'number' ? data.retcode : null
    const success = typeof data.success === 'boolean' ? data.success : null
    returnIntents(out, { jid, minionId, fun, ret: data.return, retcode, success, ts, stampMs }, runFuns)
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
