/**
 * Publishing a job for a user (contract §14): the function, then every minion salt's master matches for the target,
 * checked against the user's scoped grants; the job then goes to exactly those minions as a list, so salt cannot
 * widen it. Nothing is published when anything is refused.
 */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { expandTarget } from '../../salt/targets'
import { Forbidden, NotFound } from '../../lib/errors'
import { SaltNotConfigured, SaltRejected, SaltUnavailable } from '../../salt/errors'
import { newJid } from '../../lib/salt-time'
import { markJob } from '../jobs/service'
import { notePublished } from '../jobs/trust'
import { scopedGrantsOf } from '../roles/service'
import { executeGrants, grantsForFunction, refusedFunction, refusedOn, uncovered } from '../roles/scope'
import { minionSourcesOf } from '../minions/service'

/** A command as POST /api/run takes it. */
export interface RunRequest {
  tgt: string | string[]
  tgt_type: string
  fun: string
  arg: unknown[]
  kwarg: Record<string, unknown>
}

const noMinions = () => new NotFound('Minion', 'No minions matched the target')

/** A salt source a job did not go through, and why (its salt-api's error, or no answer in time). */
export interface SkippedSource {
  source: string
  reason: string
}

/** One salt-api a job may go through. */
interface Route {
  source: string
  client: SaltClient
  /** How long its master may take to match a target before the job goes on without it. */
  deadlineMs: number
}

/** How long a source's master may take to match a target when there are several (its runtime may shorten it). */
export const ROUTE_DEADLINE_MS = 15_000

/**
 * The salt-apis a job may go through (contract §15 "Several masters"): every running source with a complete connection,
 * `default` first with the client the caller gave; that client alone while there is one source. The sources without a
 * complete connection come back as skipped.
 */
function routes(deps: AppDeps, client: SaltClient): { via: Route[]; skipped: SkippedSource[] } {
  const sides = deps.salt?.sources() ?? []
  const skipped = sides.filter((s) => s.source !== 'default' && !s.configured()).map((s) => ({ source: s.source, reason: 'Salt API not configured' }))
  const ready = sides.filter((s) => s.source === 'default' || s.configured())
  if (ready.length <= 1) return { via: [{ source: 'default', client, deadlineMs: ROUTE_DEADLINE_MS }], skipped }
  const via = ready.map((s) => ({ source: s.source, client: s.source === 'default' ? client : s.client, deadlineMs: s.routeDeadlineMs ?? ROUTE_DEADLINE_MS }))
  return { via, skipped }
}

/** What a target matched: the minions (sorted, a minion of two masters once), the sources that answered, those skipped. */
export interface Expansion {
  minions: string[]
  answered: string[]
  skipped: SkippedSource[]
}

/** `p`, or a SaltUnavailable once `ms` have passed (the call itself goes on, bounded by the client's own timeout). */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new SaltUnavailable(`no answer within ${ms / 1000} s`)), ms)))
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Why a source was skipped, as an operator reads it: salt's own reason, or the error's message. */
function reasonOf(e: unknown): string {
  if (e instanceof SaltUnavailable) return e.httpStatus ? `salt-api answered ${e.httpStatus}` : `salt-api does not answer: ${e.reason}`
  if (e instanceof SaltRejected || e instanceof SaltNotConfigured) return e.detail
  return e instanceof Error ? e.message : String(e)
}

/**
 * The error of a job no source could take: a salt-api that answered with an error makes it the contract's 502 (naming
 * each source); sources that only did not answer (or are not configured) its 503 `Salt API unavailable`.
 */
function noSourceTook(failures: { source: string; error: unknown }[]): Error {
  const rejected = failures.filter((f) => f.error instanceof SaltRejected)
  // The detail already says "Salt API error: ": each source's part gives salt's own reason after its name.
  const part = (f: { source: string; error: unknown }) => `${f.source}: ${f.error instanceof SaltRejected ? f.error.reason : reasonOf(f.error)}`
  if (rejected.length) return new SaltRejected(failures.map(part).join('; ').slice(0, 300), (rejected[0]!.error as SaltRejected).httpStatus)
  if (failures.every((f) => f.error instanceof SaltNotConfigured)) return new SaltNotConfigured()
  return new SaltUnavailable(failures.map((f) => `${f.source}: ${reasonOf(f.error)}`).join('; '))
}

/**
 * The minions every source's master matches for a target. With one source its errors are the answer (502/503); with
 * several, a source that fails or does not answer within its deadline is skipped (named, with why), and only when no
 * source answered is it an error.
 */
export async function expandEverywhere(deps: AppDeps, client: SaltClient, tgt: string | string[], tgtType: string): Promise<Expansion> {
  const { via, skipped } = routes(deps, client)
  if (via.length === 1) return { minions: await expandTarget(client, tgt, tgtType), answered: [via[0]!.source], skipped }
  const outcomes = await Promise.all(via.map((r) => within(expandTarget(r.client, tgt, tgtType), r.deadlineMs).then(
    (ids) => ({ source: r.source, ids, error: null as unknown }),
    (error: unknown) => ({ source: r.source, ids: [] as string[], error }),
  )))
  const failed = outcomes.filter((o) => o.error !== null)
  if (failed.length === outcomes.length) throw noSourceTook(failed)
  for (const f of failed) {
    deps.log.warn('salt source skipped for a job: it did not match the target', { source: f.source, error: reasonOf(f.error) })
    skipped.push({ source: f.source, reason: reasonOf(f.error) })
  }
  const all = new Set<string>()
  for (const o of outcomes) for (const id of o.ids) all.add(id)
  return { minions: [...all].sort(), answered: outcomes.filter((o) => o.error === null).map((o) => o.source), skipped }
}

/**
 * Which source each minion's job goes through: one it has been seen through (`default` first, so a minion of salt's
 * multi-master runs the job once), else `default`, among the sources `usable` allows (all when not given; a minion whose
 * sources are all left out goes through the first usable one). In the order of the sources.
 */
async function partition(deps: AppDeps, client: SaltClient, minions: string[], usable?: readonly string[], prefer?: string) {
  const { via: all } = routes(deps, client)
  const via = usable ? all.filter((r) => usable.includes(r.source)) : all
  if (all.length === 1 || via.length === 0) return [{ ...all[0]!, minions }]
  const seen = await minionSourcesOf(deps, minions)
  const running = new Set(via.map((r) => r.source))
  const first = [prefer, 'default'].find((n) => n && running.has(n)) ?? via[0]!.source
  const groups = new Map<string, string[]>()
  for (const id of minions) {
    const names = seen.get(id) ?? []
    const name = [prefer, 'default'].find((n) => n && running.has(n) && names.includes(n)) ?? names.find((n) => running.has(n)) ?? first
    groups.set(name, [...(groups.get(name) ?? []), id])
  }
  return via.filter((r) => groups.has(r.source)).map((r) => ({ ...r, minions: groups.get(r.source)! }))
}

/** Checks and publishes a job for a user; Forbidden with the contract's sentence, NotFound when the target matches nothing. */
export async function runForUser(deps: AppDeps, client: SaltClient, user: { userId: string; username: string }, req: RunRequest) {
  const checked = await checkedMinions(deps, client, user.userId, req)
  const out = await publishChecked(deps, client, user.username, checked.minions, req, undefined, checked.answered)
  return { ...out, skipped_sources: mergeSkipped(checked.skipped, out.skipped_sources) }
}

/** Two lists of skipped sources as one, each source once (the first reason kept). */
export function mergeSkipped(a: SkippedSource[], b: SkippedSource[]): SkippedSource[] {
  const out = [...a]
  for (const s of b) if (!out.some((o) => o.source === s.source)) out.push(s)
  return out
}

/** The execute grants a user holds, with their targets: what the run form offers. */
export async function runScope(deps: AppDeps, userId: string) {
  return { grants: executeGrants(await scopedGrantsOf(deps, userId)).map((g) => ({ resource_glob: g.resource_glob, target_glob: g.target_glob })) }
}

/**
 * The checks of a run: the minions salt matches for the target, every one covered for the function by the user's grants;
 * with the sources that matched it and those skipped.
 */
export async function checkedMinions(deps: AppDeps, client: SaltClient, userId: string, req: Pick<RunRequest, 'tgt' | 'tgt_type' | 'fun'>): Promise<Expansion> {
  const grants = await scopedGrantsOf(deps, userId)
  if (!grantsForFunction(grants, req.fun).length) throw new Forbidden(refusedFunction(req.fun))
  const found = await expandEverywhere(deps, client, req.tgt, req.tgt_type)
  if (!found.minions.length) throw noMinions()
  const refused = uncovered(grants, req.fun, found.minions)
  if (refused.length) throw new Forbidden(refusedOn(req.fun, refused))
  return found
}

/**
 * Publishes a job to checked minions as a list (a whole run, or a batch's slice), noted with its Saltdeck user. With
 * several salt sources each master gets its own minions under the one jid (salt takes the jid it is given), through the
 * `usable` sources when given (those that matched the target); a master that refuses it is skipped (named, with why)
 * while another took it, and only when none took it is it an error.
 */
export async function publishChecked(
  deps: AppDeps, client: SaltClient, username: string, minions: string[], req: Pick<RunRequest, 'fun' | 'arg' | 'kwarg'>, jid = newJid(deps.clock.now()),
  usable?: readonly string[],
) {
  // The job is noted with its Saltdeck user before salt publishes it: salt reports the salt-api account as its user.
  await markJob(deps, jid, { initiator: username })
  const parts = await partition(deps, client, minions, usable)
  let answered: string | null = null
  const published: string[] = []
  const failed: { source: string; error: unknown }[] = []
  for (const part of parts) {
    let r: Awaited<ReturnType<SaltClient['localAsync']>>
    try {
      r = await part.client.localAsync(part.minions, req.fun, { tgt_type: 'list', arg: req.arg, kwarg: req.kwarg, jid })
    } catch (e) {
      // One master alone: its error is the answer, as before several sources existed.
      if (parts.length === 1) throw e
      failed.push({ source: part.source, error: e })
      continue
    }
    if (!r?.jid) continue
    answered ??= String(r.jid)
    // salt-api's answer names the minions salt published to: their returns on the bus are believed (features/jobs/trust.ts).
    notePublished(deps, String(r.jid), req.fun, r.minions ?? [])
    published.push(...(r.minions ?? []))
  }
  if (answered === null) throw failed.length ? noSourceTook(failed) : noMinions()
  for (const f of failed) deps.log.warn('salt source skipped for a job: it refused the publish', { source: f.source, error: reasonOf(f.error) })
  return { jid: answered, minions: published, skipped_sources: failed.map((f) => ({ source: f.source, reason: reasonOf(f.error) })) }
}

/**
 * Sends `saltutil.kill_job` for a job to its minions through the source the job ran through (`source`; a minion not
 * seen through it goes through one it was seen through), each master its own minions under one kill jid. With no
 * minions known, every minion of the job's source is asked (glob `*`).
 */
export async function sendKill(deps: AppDeps, client: SaltClient, jid: string, job: { minions: string[]; source: string }, killJid: string) {
  const { via } = routes(deps, client)
  const own = via.find((r) => r.source === job.source) ?? via[0]!
  const parts = job.minions.length ? await partition(deps, client, job.minions, undefined, own.source) : [{ ...own, minions: [] as string[] }]
  let killed: string | null = null
  const reached: string[] = []
  const failed: { source: string; error: unknown }[] = []
  for (const part of parts) {
    const tgt = part.minions.length ? part.minions : '*'
    try {
      const r = await part.client.localAsync(tgt, 'saltutil.kill_job', { arg: [jid], tgt_type: part.minions.length ? 'list' : 'glob', jid: killJid })
      if (r?.jid) killed ??= String(r.jid)
      reached.push(...(r?.minions ?? []))
    } catch (e) {
      if (parts.length === 1) throw e
      failed.push({ source: part.source, error: e })
    }
  }
  if (failed.length === parts.length) throw noSourceTook(failed)
  return { kill_jid: killed, minions: reached, skipped_sources: failed.map((f) => ({ source: f.source, reason: reasonOf(f.error) })) }
}
