/**
 * Rule evaluation where the facts land (contract §11): runs and key/presence events as applyFacts stores them, and a
 * periodic tick for the rules that depend on time (minion_offline, salt_unreachable, master_unreachable). A rule only judges what happens
 * after it exists: runs completed before the rule was created never fire it.
 */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { globMatch } from '../../lib/glob'
import type { StoredRun } from '../runs/service'
import type { EventOut } from '../activity/service'
import { enabledRules, fire, firingSubjects, occurrence, paramsOf, resolve, type RuleRow } from './state'
import { RANK_SEVERITY, SEVERITY_RANK } from '../vulns/findings'
import { minionVulnIds } from '../vulns/service'
import { lastRunAt, minionsWorstAtLeast, offlineMinions } from './watch-store'

const RUN_KINDS = ['run_failed', 'run_blocked', 'run_changed']

const funOk = (rule: RuleRow, fun: string) => globMatch(String(paramsOf(rule).fun_glob ?? '*'), fun)

/** How many failing states a run_failed message names before "and N more". */
const NAMED_STATES = 3

/** "pkg-nginx, conf-nginx, svc-nginx and 4 more": the first failing states of a run by id, then how many else. */
export function failedStatesText(ids: string[], total: number): string {
  const shown = ids.slice(0, NAMED_STATES)
  const more = total - shown.length
  if (!shown.length) return ''
  if (more <= 0) return shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}` : shown[0]!
  return `${shown.join(', ')} and ${more.toLocaleString('en-US')} more`
}

/**
 * Judges stored runs against the run rules, in ingest's transaction `tx`; dry runs never count. A backfilled run older
 * than the minion's newest real run must not overturn what the newer one said.
 */
export async function watchRuns(tx: Queryable, runs: StoredRun[]) {
  const real = runs.filter((r) => !r.test)
  if (!real.length) return
  const rules = await enabledRules(tx, RUN_KINDS)
  if (!rules.length) return
  for (const run of real) {
    const newest = await lastRunAt(tx, run.minionId)
    if (newest !== null && run.completedAt < newest) continue
    const details = { jid: run.jid, function: run.fun, status: run.status, ...(run.failedTotal ? { failed_states: run.failedStates, failed_count: run.failedTotal } : {}) }
    const failing = failedStatesText(run.failedStates, run.failedTotal)
    for (const rule of rules) {
      if (run.completedAt < rule.created_at || !globMatch(rule.minion_glob, run.minionId) || !funOk(rule, run.fun)) continue
      if (rule.kind === 'run_failed') {
        if (run.status === 'unhealthy') await fire(tx, rule, run.minionId, `${run.minionId}: ${run.fun} failed${failing ? `: ${failing}` : ''} (jid ${run.jid})`, details, run.completedAt)
        else if (run.status === 'healthy' || run.status === 'changed') await resolve(tx, rule, run.minionId, run.completedAt, `${run.minionId}: ${run.fun} succeeded again (jid ${run.jid})`)
      } else if (rule.kind === 'run_blocked') {
        if (run.status === 'blocked') await fire(tx, rule, run.minionId, `${run.minionId}: ${run.fun} did not run (jid ${run.jid})`, details, run.completedAt)
        else await resolve(tx, rule, run.minionId, run.completedAt, `${run.minionId}: ${run.fun} ran again (jid ${run.jid})`)
      } else if (run.status === 'changed') await occurrence(tx, rule, run.minionId, `${run.minionId}: ${run.fun} changed something (jid ${run.jid})`, details, run.completedAt)
    }
  }
}

/**
 * Judges stored key and presence events, in ingest's transaction `tx`: a pending key fires key_pending; its decision,
 * or the minion online, resolves.
 */
export async function watchEvents(tx: Queryable, events: EventOut[]) {
  const keyEvents = events.filter((e) => e.category === 'key' || e.event_type === 'minion.online')
  if (!keyEvents.length) return
  const rules = await enabledRules(tx, ['key_pending', 'minion_offline'])
  for (const e of keyEvents) {
    const id = e.minion_id
    if (!id) continue
    const at = Date.parse(e.ts)
    for (const rule of rules) {
      if (!globMatch(rule.minion_glob, id)) continue
      if (rule.kind === 'key_pending' && e.event_type === 'key.pend' && at >= rule.created_at) await fire(tx, rule, id, `${id}: key pending`, { event: e.event_type }, at)
      else if (rule.kind === 'key_pending' && e.category === 'key' && e.event_type !== 'key.pend') await resolve(tx, rule, id, at, `${id}: key no longer pending (${e.event_type})`)
      else if (rule.kind === 'minion_offline' && e.event_type === 'minion.online') await resolve(tx, rule, id, at, `${id}: online again`)
    }
  }
}

/**
 * The vulnerable rule against the findings' per-minion summary (kept current by the vulnerability matcher): a minion
 * with a finding at or above `min_severity` fires, one with none left resolves. Records of unknown severity never reach
 * a threshold. Judged on the tick like the other state rules, so a new rule covers what is already there.
 */
async function watchVulnerable(deps: AppDeps, now: number) {
  const db = deps.db
  for (const rule of await enabledRules(db, ['vulnerable'])) {
    const min = String(paramsOf(rule).min_severity ?? 'high')
    const rank = SEVERITY_RANK[min] ?? SEVERITY_RANK.high!
    const firing = await firingSubjects(db, rule.id)
    const still = new Set<string>()
    const fires: { id: string; summary: string; details: Record<string, unknown> }[] = []
    for (const m of await minionsWorstAtLeast(db, rank)) {
      if (!globMatch(rule.minion_glob, m.minion_id)) continue
      still.add(m.minion_id)
      if (firing.has(m.minion_id)) continue
      // Read before the transaction: inside it only its tx may be used.
      const ids = await minionVulnIds(deps, m.minion_id, rank, 20)
      fires.push({
        id: m.minion_id, summary: `${m.minion_id}: ${ids.total} ${ids.total === 1 ? 'vulnerability' : 'vulnerabilities'} at or above ${min} (worst ${RANK_SEVERITY[m.worst]})`,
        details: { worst: RANK_SEVERITY[m.worst], count: ids.total, vulnerability_ids: ids.ids },
      })
    }
    const gone = [...firing].filter((s) => !still.has(s))
    if (!fires.length && !gone.length) continue
    // Each alert change lands with its outbox entry: one transaction per rule's changes.
    await db.tx(async (tx) => {
      for (const f of fires) await fire(tx, rule, f.id, f.summary, f.details, now)
      for (const s of gone) await resolve(tx, rule, s, now, `${s}: no vulnerability at or above ${min} left`)
    })
  }
}

/**
 * The time-based rules: minions offline for long enough (never while the master holds presence back), salt-api or the
 * salt-master unreachable for long enough, vulnerable minions.
 */
export async function watchTime(deps: AppDeps) {
  const now = deps.clock.now()
  const db = deps.db
  await watchVulnerable(deps, now)
  // Asked only when a rule needs it: the health snapshot may ask salt for its version.
  const masterRules = await enabledRules(db, ['master_unreachable'])
  const offlineRules = await enabledRules(db, ['minion_offline'])
  const snap = masterRules.length || offlineRules.length ? deps.salt?.health() : undefined
  // While the master does not answer, and in the grace after it answers again, presence is not known: nobody fires.
  const held = !!snap?.master.hold
  for (const rule of held ? [] : offlineRules) {
    const forMs = Number(paramsOf(rule).for_minutes ?? 10) * 60_000
    // One transaction per rule: each alert change lands with its outbox entry, and the rule is judged on one view.
    await db.tx(async (tx) => {
      const firing = await firingSubjects(tx, rule.id)
      const offline = (await offlineMinions(tx)).filter((m) => globMatch(rule.minion_glob, m.id))
      const still = new Set<string>()
      for (const m of offline) {
        still.add(m.id)
        // Offline since before the rule existed counts from the rule's creation.
        const since = Math.max(m.since, rule.created_at)
        if (now - since < forMs) continue
        await fire(tx, rule, m.id, `${m.id}: offline for ${Math.floor((now - m.since) / 60_000)} min`, { minutes_offline: Math.floor((now - m.since) / 60_000), last_seen: m.since }, now)
      }
      for (const s of firing) if (!still.has(s)) await resolve(tx, rule, s, now, `${s}: no longer offline`)
    })
  }
  const rules = await enabledRules(db, ['salt_unreachable'])
  // Asked only when a rule needs it: the health snapshot may ask salt for its version. Each salt source is its own subject.
  const sides = rules.length || masterRules.length ? deps.salt?.sources() ?? [] : []
  const snaps = sides.map((side) => ({ source: side.source, h: side === deps.salt && snap ? snap : side.health() }))
  for (const rule of rules) {
    const forMs = Number(paramsOf(rule).for_minutes ?? 5) * 60_000
    for (const { source, h } of snaps) {
      const reach = h.reachability
      const subject = sourceSubject('salt-api', source)
      if (reach.up === false && reach.since !== null && now - Math.max(reach.since, rule.created_at) >= forMs)
        await db.tx((tx) => fire(tx, rule, subject, `${named(source)}salt-api does not answer (${reach.error ?? 'no answer'})`, { source, since: reach.since, error: reach.error }, now))
      else if (reach.up) await db.tx((tx) => resolve(tx, rule, subject, now, `${named(source)}salt-api answers again`))
    }
  }
  for (const rule of masterRules) {
    const forMs = Number(paramsOf(rule).for_minutes ?? 2) * 60_000
    for (const { source, h } of snaps) {
      const master = h.master
      const subject = sourceSubject(MASTER_SUBJECT, source)
      if (master.up === false && master.since !== null && now - Math.max(master.since, rule.created_at) >= forMs)
        await db.tx((tx) => fire(tx, rule, subject, `${named(source)}salt-master does not answer through salt-api (${master.error ?? 'no answer'})`, { source, since: master.since, error: master.error }, now))
      else if (master.up) await db.tx((tx) => resolve(tx, rule, subject, now, `${named(source)}salt-master answers again`))
    }
  }
  // A source removed while its alert fires: nothing will answer again for it, so the alert resolves now.
  if (deps.salt) {
    const live = new Set(snaps.flatMap(({ source }) => [sourceSubject('salt-api', source), sourceSubject(MASTER_SUBJECT, source)]))
    for (const rule of [...rules, ...masterRules])
      for (const s of await firingSubjects(db, rule.id))
        if (!live.has(s)) await db.tx((tx) => resolve(tx, rule, s, now, `${s}: the salt source was removed`))
  }
}

/**
 * The subject of a salt source's salt_unreachable or master_unreachable alert: `salt-api` and `salt-master` for the
 * `default` source (as contract §11 and §17 name them), `salt-api:<source>` and `salt-master:<source>` for the others.
 */
export const sourceSubject = (base: string, source: string) => (source === 'default' ? base : `${base}:${source}`)
/** The prefix of an alert's summary that names a source other than `default`. */
const named = (source: string) => (source === 'default' ? '' : `salt source ${source}: `)

/** The subject of master_unreachable: the one salt source's master. */
export const MASTER_SUBJECT = 'salt-master'
