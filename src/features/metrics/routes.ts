/** GET /metrics: Prometheus text for a caller holding `view metrics:*`, by session or by API token alike. */
import { route } from '../../http/route'
import { Forbidden } from '../../lib/errors'
import { holds } from '../roles/service'
import { VERSION } from '../../version'
import type { AppDeps } from '../../deps'
import { dbSizeBytes } from '../../db/client'
import { Exposition } from './registry'
import { activityStored } from '../activity/feed'
import { searchBacklog } from '../activity/service'
import { alertStats } from '../alerts/service'
import { vulnStats } from '../vulns/service'
import { trustStats } from '../jobs/trust'

const STREAM_STATES = ['connected', 'reconnecting', 'broken', 'disabled'] as const

/** The exposition for one service. */
export async function metricsText(deps: AppDeps): Promise<string> {
  const x = new Exposition()
  const reqs = deps.metrics?.requestRows() ?? []
  x.family('saltdeck_build_info', 'gauge', 'Version of the running service.', [[{ version: VERSION }, 1]])
  x.family('saltdeck_http_requests_total', 'counter', 'HTTP requests answered, by route pattern, method and status.', reqs.map((r) => [{ route: r.route, method: r.method, status: r.status }, r.count]))
  x.family('saltdeck_http_request_duration_seconds_total', 'counter', 'Time spent answering HTTP requests, by route pattern, method and status.', reqs.map((r) => [{ route: r.route, method: r.method, status: r.status }, r.seconds]))
  x.family('saltdeck_sign_ins_total', 'counter', 'Sign-in attempts, by provider (local, ldap, oidc) and outcome.', (deps.metrics?.signInRows() ?? []).map((r) => [{ provider: r.provider, outcome: r.outcome }, r.count]))
  // Each salt source's series carry its name (contract §15 "Several masters"); without a salt side, `default`'s stay empty.
  const sides = deps.salt?.sources() ?? []
  const pollers = sides.flatMap((side) => side.pollers.stats().map((p) => ({ source: side.source, p })))
  x.family('saltdeck_poller_runs_total', 'counter', 'Poller ticks finished, by salt source.', pollers.map(({ source, p }) => [{ source, poller: p.name }, p.runs]))
  x.family('saltdeck_poller_errors_total', 'counter', 'Poller ticks that failed, by salt source.', pollers.map(({ source, p }) => [{ source, poller: p.name }, p.errors]))
  x.family('saltdeck_poller_duration_seconds_total', 'counter', 'Time spent in poller ticks, by salt source.', pollers.map(({ source, p }) => [{ source, poller: p.name }, p.totalMs / 1000]))
  x.family('saltdeck_poller_last_duration_seconds', 'gauge', 'Duration of the last poller tick, by salt source.', pollers.map(({ source, p }) => [{ source, poller: p.name }, (p.lastDurationMs ?? 0) / 1000]))
  x.family('saltdeck_poller_waiting_for_master', 'gauge', 'Whether the poller skipped its last tick because the salt-master does not answer (1) or not (0), by salt source.', pollers.map(({ source, p }) => [{ source, poller: p.name }, p.waitingForMaster ? 1 : 0]))
  x.family('saltdeck_events_ingested_total', 'counter', 'Activity events stored from salt (event stream and pollers).', [[{}, activityStored(deps)]])
  // The cluster bus (contract §15): news told to other instances on the database, and heard from them.
  if (deps.bus) {
    x.family('saltdeck_cluster_notifications_sent_total', 'counter', 'Notices this instance sent on the cluster bus (settings, credentials, activity, totals, salt sources).', [[{}, deps.bus.stats.sent]])
    x.family('saltdeck_cluster_notifications_received_total', 'counter', 'Notices this instance received from other instances on the cluster bus.', [[{}, deps.bus.stats.received]])
  }
  x.family('saltdeck_event_stream_connected', 'gauge', '1 while the salt-api event stream is connected, by salt source.',
    (sides.length ? sides : [null]).map((side) => [{ source: side?.source ?? 'default' }, side?.stream.status().connected ? 1 : 0]))
  const healths = sides.map((side) => ({ source: side.source, health: side.health() }))
  if (healths.length) {
    x.family('saltdeck_event_stream_state', 'gauge', 'The event stream\'s state, by salt source: 1 for the current one.', healths.flatMap(({ source, health }) => STREAM_STATES.map((s) => [{ source, state: s }, s === health.stream.state ? 1 : 0] as const)))
    x.family('saltdeck_event_stream_polling_covers', 'gauge', '1 while the jobs and fleet pollers run at their catch-up interval for a stream that is down, by salt source.', healths.map(({ source, health }) => [{ source }, health.covering ? 1 : 0]))
    x.family('saltdeck_salt_api_up', 'gauge', '1 while salt-api answers, 0 while it does not (absent before the first exchange), by salt source.', healths.filter(({ health }) => health.reachability.up !== null).map(({ source, health }) => [{ source }, health.reachability.up ? 1 : 0]))
    x.family('saltdeck_salt_master_up', 'gauge', '1 while the salt-master answers through salt-api, 0 while it does not (absent while unknown), by salt source.', healths.filter(({ health }) => health.master.up !== null).map(({ source, health }) => [{ source }, health.master.up ? 1 : 0]))
    x.family('saltdeck_presence_held', 'gauge', '1 while presence is held back because of the master (not answering, or the grace after it answers again), by salt source.', healths.map(({ source, health }) => [{ source }, health.master.hold ? 1 : 0]))
    x.family('saltdeck_poller_lag_seconds', 'gauge', 'Seconds since the poller last succeeded (absent until it has), by salt source.', healths.flatMap(({ source, health }) => health.pollers.filter((p) => p.lagSeconds !== null).map((p) => [{ source, poller: p.name }, p.lagSeconds!] as const)))
  }
  // Events from minions are claims (contract §17): what was refused, held back, confirmed, and the hints read.
  const t = trustStats(deps)
  const frames = deps.salt?.stream.refused ?? {}
  x.family('saltdeck_salt_events_refused_total', 'counter', 'Salt events not stored as facts, by reason: frame (not salt\'s SSE frame), injected (written into the stream by another event\'s tag), jid (not a salt jid), forged (a minion\'s event under a master-only tag or another minion\'s name), unconfirmed (held and never confirmed by the job cache), overflow (held returns past the bound).',
    [...Object.entries(frames), ...Object.entries(t.refused)].map(([reason, n]) => [{ reason }, n]))
  x.family('saltdeck_salt_returns_held', 'gauge', 'Job returns from the event bus held until salt\'s job cache confirms them.', [[{}, t.held]])
  x.family('saltdeck_salt_returns_held_total', 'counter', 'Job returns from the event bus held back (no publish to that minion seen).', [[{}, t.heldTotal]])
  x.family('saltdeck_salt_returns_confirmed_total', 'counter', 'Held job returns that salt\'s job cache confirmed (stored from the cache).', [[{}, t.confirmedTotal]])
  x.family('saltdeck_salt_event_hints_total', 'counter', 'Events taken as hints only (salt/auth: keys; salt/presence/*, minion starts: presence), by the tick they ask for.', Object.entries(t.hints).map(([hint, n]) => [{ hint }, n]))
  const al = await alertStats(deps)
  x.family('saltdeck_alerts_firing', 'gauge', 'Alerts firing, by rule kind.', al.firing.map((r) => [{ kind: r.kind }, r.n]))
  x.family('saltdeck_alert_deliveries', 'gauge', 'Alert notification deliveries, by status.', al.deliveries.map((r) => [{ status: r.status }, r.n]))
  const vs = await vulnStats(deps)
  x.family('saltdeck_vuln_feed_records', 'gauge', 'OSV records imported, by ecosystem.', vs.feeds.map((f) => [{ ecosystem: f.ecosystem }, f.records]))
  x.family('saltdeck_vuln_feed_age_seconds', 'gauge', 'Seconds since each ecosystem\'s feed was imported.', vs.feeds.map((f) => [{ ecosystem: f.ecosystem }, Math.max(0, Math.round((deps.clock.now() - f.imported_at) / 1000))]))
  x.family('saltdeck_vulnerable_minions', 'gauge', 'Minions with at least one finding, by the severity of their worst.', vs.minions.map((m) => [{ severity: m.severity }, m.n]))
  x.family('saltdeck_search_index_pending_events', 'gauge', 'Activity events stored but not yet in the search index.', [[{}, await searchBacklog(deps)]])
  x.family('saltdeck_db_size_bytes', 'gauge', 'Size of the database (SQLite: the file and its WAL).', [[{}, await dbSizeBytes(deps.db)]])
  x.family('process_resident_memory_bytes', 'gauge', 'Resident set size of the process.', [[{}, process.memoryUsage.rss()]])
  x.family('saltdeck_memory_collections_total', 'counter', 'Full garbage collections asked for because resident memory passed the soft limit.', [[{}, deps.metrics?.memoryCollections ?? 0]])
  x.family('saltdeck_memory_collection_seconds_total', 'counter', 'Seconds the serving thread spent asking for those collections (they run on the collector thread).', [[{}, deps.metrics?.memoryCollectionSeconds ?? 0]])
  x.family('saltdeck_memory_collection_longest_seconds', 'gauge', 'The longest of those asks since start: the pause a request could meet.', [[{}, deps.metrics?.memoryCollectionLongest ?? 0]])
  return x.text()
}

/** The metrics route. */
export const metricsRoutes = [
  route({
    method: 'GET', path: '/metrics', produces: 'text/plain', tag: 'system', summary: 'Prometheus metrics (view metrics:*, session or token alike)', access: 'login',
    async handler({ deps, principal }) {
      // Scrapers authenticate with an API token; a browser session needs the permission.
      // One rule for cookie and token (issue 23 item 5): a token holds its user's permissions, no more.
      if (!holds(principal.grants, 'view', 'metrics:*')) throw new Forbidden()
      return new Response(await metricsText(deps), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } })
    },
  }),
]
