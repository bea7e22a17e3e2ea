/**
 * The Salt health view: whether the master answers, its version and its known faults, the minions' versions, whether salt-api answers,
 * the event stream's state and each poller's last success, and the problems among them in plain sentences.
 */
import type { AppDeps, SaltHealthSnapshot, SourceSide } from '../../deps'
import { faultsOf, parseVersion } from '../../salt/versions'
import { CATCH_UP_SECONDS } from '../../lib/poller-status'
import { iso, isoOrNull } from '../../lib/clock'
import { minionVersions } from '../minions/service'
import { readSection, settingsStatus } from '../settings/service'
import { checkWritable } from '../../db/writable'
import { leaderViews, type LeaderView } from '../instances/service'

/** A poller is late once it has not succeeded for this many of its intervals. */
const LATE_INTERVALS = 3
/** A stream reconnecting for longer than this is a problem worth showing. */
const RECONNECTING_PROBLEM_MS = 60_000

/** The snapshot of a service with no salt side (CLI, core tests): nothing runs. */
function idle(deps: AppDeps): SaltHealthSnapshot {
  const enabled = readSection(deps, 'pollers').event_stream_enabled === true
  return {
    masterVersion: null, reachability: { up: null, since: null, error: null }, covering: false, pollers: [],
    master: { up: null, since: null, error: null, hold: null, graceUntil: null, checkSeconds: 0 },
    stream: { state: enabled ? 'reconnecting' : 'disabled', since: deps.clock.now(), lastEventAt: null, reconnectsLastHour: 0, lastError: null },
  }
}

const newer = (a: string | null, b: string | null) => {
  const x = parseVersion(a)
  const y = parseVersion(b)
  return !!x && !!y && (x[0] - y[0] || x[1] - y[1]) > 0
}

/** Who leads a salt source as the health document says it: here, another instance, or nobody now. */
type Leader = { instance_id: string | null; hostname: string | null; here: boolean; reported_at: string | null } | null

/**
 * A source's state as Salt health shows it, and its leader. This instance's own when it leads the source; otherwise
 * the event stream and pollers are the leader's (its last heartbeat's snapshot, instances/service.ts): a follower runs
 * neither, and its own would look disconnected. salt-api and the master stay this instance's view: it watches both.
 */
function viewOf(now: number, side: SourceSide, own: SaltHealthSnapshot, views: Map<string, LeaderView>): { h: SaltHealthSnapshot; leader: Leader } {
  const v = views.get(side.source)
  if (side.leads) return { h: own, leader: { instance_id: v?.id ?? null, hostname: v?.hostname ?? null, here: true, reported_at: null } }
  if (!v) return { h: own, leader: null }
  const leader = { instance_id: v.id, hostname: v.hostname, here: false, reported_at: iso(v.seenAt) }
  const t = v.health
  if (!t) return { h: own, leader }
  // Lags move on since the leader wrote them.
  const pollers = t.pollers.map((p) => ({ ...p, lagSeconds: p.lastSuccess === null ? null : Math.max(0, Math.round((now - p.lastSuccess) / 1000)) }))
  return { h: { ...own, masterVersion: own.masterVersion ?? t.masterVersion, stream: t.stream, covering: t.covering, pollers }, leader }
}

/** GET /api/salt/health; `namesInstances`: whether the leader's id and hostname are shown (else only whether it is this instance). */
export async function saltHealth(deps: AppDeps, { namesInstances = true }: { namesInstances?: boolean } = {}) {
  const now = deps.clock.now()
  const views = deps.salt ? await leaderViews(deps) : new Map<string, LeaderView>()
  const named = (v: { h: SaltHealthSnapshot; leader: Leader }) => (namesInstances || !v.leader ? v : { ...v, leader: { ...v.leader, instance_id: null, hostname: null } })
  const mine = deps.salt ? named(viewOf(now, deps.salt, deps.salt.health(), views)) : { h: idle(deps), leader: null }
  const h = mine.h
  const configured = settingsStatus(deps).configured
  const versions = await minionVersions(deps)
  const master = h.masterVersion
  // Lateness counts from when salt-api and the master last answered again: a poller that could not run while either
  // was gone (their problems say why) is late only if it has not caught up within its intervals since.
  const answering = Math.max(h.reachability.up === true ? h.reachability.since ?? 0 : 0, h.master.up === true ? h.master.since ?? 0 : 0)
  const answeringSeconds = Math.max(0, Math.round((now - answering) / 1000))
  const pollers = h.pollers.map((p) => ({
    name: p.name, interval_seconds: p.interval, last_success_at: isoOrNull(p.lastSuccess), lag_seconds: p.lagSeconds, last_error: p.lastError,
    late: configured && h.reachability.up !== false && h.master.up !== false && p.interval > 0 && p.lagSeconds !== null &&
      Math.min(p.lagSeconds, answeringSeconds) > p.interval * LATE_INTERVALS,
  }))
  const problems: string[] = []
  const unwritable = await checkWritable(deps.db, now)
  if (unwritable) problems.push(`The database cannot be written since ${iso(unwritable.since)} (${unwritable.error}): changes are not stored and /readyz answers 503 until a write succeeds.`)
  if (!configured) problems.push('The salt connection is not set up: enter it under Settings.')
  if (h.reachability.up === false)
    problems.push(`salt-api does not answer (${h.reachability.error ?? 'no answer'}) since ${isoOrNull(h.reachability.since)}; minion presence is unknown until it does.`)
  if (h.master.up === false && h.reachability.up !== false)
    problems.push(`The salt-master does not answer through salt-api (${h.master.error ?? 'no answer'}) since ${isoOrNull(h.master.since)}; minion presence is unknown and no minion is marked offline until it does.`)
  else if (h.master.hold === 'grace')
    problems.push(`The salt-master answers again since ${isoOrNull(h.master.since)}; its minions are reconnecting, so none is marked offline before ${isoOrNull(h.master.graceUntil)} (two presence intervals).`)
  if (h.stream.state === 'broken')
    problems.push(`The event stream fails at once although salt-api answers (${h.stream.lastError ?? 'no detail'}); the jobs and fleet pollers run every ${CATCH_UP_SECONDS} s until it works.`)
  if (h.stream.state === 'reconnecting' && configured && now - h.stream.since > RECONNECTING_PROBLEM_MS)
    problems.push(`The event stream has been reconnecting since ${iso(h.stream.since)}; the jobs and fleet pollers run every ${CATCH_UP_SECONDS} s meanwhile.`)
  for (const p of pollers) {
    if (p.last_error) problems.push(`The ${p.name} poller failed: ${p.last_error}`)
    else if (p.late) problems.push(`The ${p.name} poller has not succeeded for ${p.lag_seconds} s (every ${p.interval_seconds} s).`)
  }
  // The other sources' problems, each named (default's are the sentences above).
  const sides = deps.salt?.sources() ?? []
  const others = sides.slice(1).map((side) => ({ side, ...named(viewOf(now, side, side.health(), views)) }))
  for (const { side, h: o } of others) {
    const name = side.source
    if (!side.configured()) problems.push(`Salt source ${name}: its connection is not complete (URL, username and password).`)
    if (o.reachability.up === false) problems.push(`Salt source ${name}: salt-api does not answer (${o.reachability.error ?? 'no answer'}) since ${isoOrNull(o.reachability.since)}.`)
    else if (o.master.up === false) problems.push(`Salt source ${name}: the salt-master does not answer through salt-api (${o.master.error ?? 'no answer'}) since ${isoOrNull(o.master.since)}.`)
    if (o.stream.state === 'broken') problems.push(`Salt source ${name}: the event stream fails at once (${o.stream.lastError ?? 'no detail'}).`)
    for (const p of o.pollers) if (p.lastError) problems.push(`Salt source ${name}: the ${p.name} poller failed: ${p.lastError}`)
  }
  const sourceOf = (name: string, isConfigured: boolean, presenceKnown: boolean, s: SaltHealthSnapshot, leader: Leader) => ({
    name, configured: isConfigured, presence_known: presenceKnown, leader,
    salt_api: { reachable: s.reachability.up, since: isoOrNull(s.reachability.since), error: s.reachability.up === false ? s.reachability.error : null },
    master: { version: s.masterVersion, reachable: s.master.up, since: isoOrNull(s.master.since), error: s.master.up === false ? s.master.error : null },
    event_stream: { state: s.stream.state, since: iso(s.stream.since), last_error: s.stream.lastError },
    pollers: s.pollers.map((p) => ({ name: p.name, interval_seconds: p.interval, last_success_at: isoOrNull(p.lastSuccess), last_error: p.lastError })),
  })
  const sources = [
    sourceOf('default', configured, deps.salt?.presenceKnown() ?? true, h, mine.leader),
    ...others.map(({ side, h: o, leader }) => sourceOf(side.source, side.configured(), side.presenceKnown(), o, leader)),
  ]
  const ahead = versions.filter((v) => newer(v.version, master)).reduce((n, v) => n + v.minions, 0)
  if (ahead) problems.push(`${ahead} minion${ahead === 1 ? ' runs' : 's run'} a newer Salt than the master (${master}); Salt supports minions at or below the master's version.`)
  return {
    configured,
    salt_api: { reachable: h.reachability.up, since: isoOrNull(h.reachability.since), error: h.reachability.up === false ? h.reachability.error : null },
    presence_known: deps.salt?.presenceKnown() ?? true,
    leader: mine.leader,
    database: { writable: !unwritable, since: isoOrNull(unwritable?.since), error: unwritable?.error ?? null },
    master: {
      version: master, reachable: h.master.up, since: isoOrNull(h.master.since), error: h.master.up === false ? h.master.error : null,
      presence_hold: h.master.hold, grace_until: isoOrNull(h.master.graceUntil), check_interval_seconds: h.master.checkSeconds,
    },
    minion_versions: versions,
    event_stream: {
      state: h.stream.state, since: iso(h.stream.since), last_event_at: isoOrNull(h.stream.lastEventAt), reconnects_last_hour: h.stream.reconnectsLastHour,
      last_error: h.stream.lastError, polling_covers: h.covering, catch_up_interval_seconds: CATCH_UP_SECONDS,
    },
    pollers,
    sources,
    known_faults: faultsOf(master).map((f) => ({ id: f.id, versions: f.to === f.from ? f.from : `${f.from}–${f.to ?? ''}`, issue: f.issue, summary: f.summary, handling: f.handling })),
    problems,
  }
}
