/** Records of the fleet API as the dashboard reads them (contract §6–§8), and pure helpers the fleet pages share. */
// Types only: the answer schemas are schema-only modules, and `import type` keeps them (and TypeBox) out of the bundle.
import type { Static } from '@sinclair/typebox'
import type { EventListOut, EventOut } from '../../features/activity/schema'
import type { MinionPackagesOut, PackageListOut, PackageMinionsOut, PackageRow as PackageRowOut, PackageVersionsOut, RefreshOut, RefreshStatusOut } from '../../features/inventory/schema'
import type { KillOut, RunOut as RunStartedOut } from '../../features/salt-actions/schema'
import type { WidgetOut } from '../../features/settings/schema'
import type { JobDetailOut, JobListOut, JobOut, KeyListsOut } from '../../features/jobs/schema'
import type { MinionDetailOut, MinionListOut, MinionSummaryOut, OutcomeOut, RunDetailOut, RunDiffOut, RunListOut, RunOut, StateOut } from '../../features/minions/schema'
import type { FailingStateOut, FailingStatesOut, StatusCountsOut, TrendOut } from '../../features/runs/schema'
import type { HealthOut } from '../../features/salt-health/schema'
import type { ClusterOut } from '../../features/instances/schema'

/** Values of the minion list's `status` filter (README: presence, key state, last run). */
export const MINION_STATUSES = ['online', 'offline', 'accepted', 'pending', 'rejected', 'denied', 'healthy', 'changed', 'unhealthy', 'blocked'] as const
/** Values of a run's `status`. */
export const RUN_STATUSES = ['healthy', 'changed', 'unhealthy', 'blocked'] as const
/** A run status. */
export type RunStatus = (typeof RUN_STATUSES)[number]
/** Activity categories (contract §6). */
export const ACTIVITY_CATEGORIES = ['job', 'key', 'minion'] as const
/** Activity event types (contract §6). */
export const ACTIVITY_TYPES = ['job.new', 'job.ret', 'key.pend', 'key.accept', 'key.reject', 'key.delete', 'minion.start', 'minion.online', 'minion.offline'] as const
/** Sort keys of the package list. */
export const PACKAGE_SORTS = ['name', 'minion_count', 'version_count', 'last_seen'] as const
/** A package list sort key. */
export type PackageSort = (typeof PACKAGE_SORTS)[number]
/** Target types POST /api/run accepts. */
export const TARGET_TYPES = ['glob', 'pcre', 'list', 'grain', 'grain_pcre', 'pillar', 'pillar_pcre', 'nodegroup', 'range', 'compound', 'ipcidr'] as const

/** One row of GET /api/minions. */
export type MinionSummary = Static<typeof MinionSummaryOut>
/** GET /api/minions/{id}. */
export type MinionDetail = Static<typeof MinionDetailOut>
/** A list answer of GET /api/minions. */
export type MinionList = Static<typeof MinionListOut>
/** One state run of a minion: the server's run counts plus where and when. */
export type Run = Static<typeof RunOut>
/** One state of a run, in Salt's order. */
export type StateRow = Static<typeof StateOut>
/** GET /api/minions/{id}/runs/{jid}: the run with its states, or its render errors, or neither when pruned. */
export type RunDetail = Static<typeof RunDetailOut>
/** A state's outcome in one run of a diff. */
export type Outcome = NonNullable<Static<typeof OutcomeOut>>
/** GET /api/minions/{id}/runs/{jid}/diff. */
export type RunDiff = Static<typeof RunDiffOut>
/** Counts of minions by their last real run's status (summary, and each trend point). */
export type StatusCounts = Static<typeof StatusCountsOut>
/** GET /api/runs/trend. */
export type Trend = Static<typeof TrendOut>
/**
 * What the compliance panel says when no state is failing, beside the "Runs failing" count: a run that fails before
 * any state runs (a render or compile error) makes its minion unhealthy without a failing state, so the two would
 * seem to disagree unless the sentence says why.
 */
export function noFailingStateText(unhealthy: number | undefined): string {
  if (!unhealthy) return 'No state is failing.'
  const who = unhealthy === 1 ? '1 minion whose' : `${unhealthy.toLocaleString()} minions whose`
  return `No state is failing, but ${who} last run failed before any state ran (a render or compile error) ${unhealthy === 1 ? 'counts' : 'count'} in Runs failing.`
}

/** One item of GET /api/runs/failing-states. */
export type FailingState = Static<typeof FailingStateOut>
/** One activity event. */
export type ActivityEvent = Static<typeof EventOut>
/** GET /api/activity/widget-config. */
export type WidgetConfig = Static<typeof WidgetOut>
/** One job of GET /api/jobs. */
export type Job = Static<typeof JobOut>
/** GET /api/jobs/{jid}. */
export type JobDetail = Static<typeof JobDetailOut>
/** One row of GET /api/inventory/packages. */
export type PackageRow = Static<typeof PackageRowOut>
/** GET /api/inventory/packages/{name}/versions. */
export type PackageVersions = Static<typeof PackageVersionsOut>
/** GET /api/inventory/packages/{name}/minions: the holders of a package. */
export type PackageMinions = Static<typeof PackageMinionsOut>
/** One inventory refresh as GET /api/inventory/status describes it. */
export type Refresh = Static<typeof RefreshOut>
/** GET /api/inventory/status. */
export type RefreshStatus = Static<typeof RefreshStatusOut>
/** GET /api/minions/{id}/packages. */
export type MinionPackages = Static<typeof MinionPackagesOut>
/** POST /api/run (202). */
export type RunStarted = Static<typeof RunStartedOut>
/** POST /api/jobs/{jid}/kill (202). */
export type KillStarted = Static<typeof KillOut>
/** GET /api/keys. */
export type KeyLists = Static<typeof KeyListsOut>

/** The command that prints, on the minion, the fingerprint to compare with (the master's own way differs on 3008.0–3008.3). */
export const MINION_FINGER = 'salt-call --local key.finger'
/** On a 3008.0–3008.3 master (saltstack/salt#69970): the sha256 of the key with its BEGIN/END lines, as the master hashes it. */
export const MINION_FINGER_3008 = `printf %s "$(cat /etc/salt/pki/minion/minion.pub)" | sha256sum | cut -c1-64 | sed 's/../&:/g; s/:$//'`

/** The fingerprint of a key, or null; only an own property counts (an id such as `constructor` is data, not a lookup). */
export const fingerprintOf = (lists: Pick<KeyLists, 'fingerprints'>, id: string): string | null =>
  lists.fingerprints && Object.prototype.hasOwnProperty.call(lists.fingerprints, id) && typeof lists.fingerprints[id] === 'string' ? lists.fingerprints[id]! : null

/** Badge tone of a run status or a minion's last-run status. */
export function runTone(status: string | null | undefined): 'ok' | 'info' | 'bad' | 'warn' | 'muted' {
  switch (status) {
    case 'healthy': return 'ok'
    case 'changed': return 'info'
    case 'unhealthy': return 'bad'
    case 'blocked': return 'warn'
    default: return 'muted'
  }
}

/** Badge tone of a key state. */
export function keyTone(state: string | null | undefined): 'ok' | 'warn' | 'bad' | 'muted' {
  switch (state) {
    case 'accepted': return 'ok'
    case 'pending': return 'warn'
    case 'rejected':
    case 'denied': return 'bad'
    default: return 'muted'
  }
}

/** Badge tone of a key list's count: a list with no keys is nothing to look at (a red "Rejected 0" read as an error). */
export const keyCountTone = (state: string, n: number) => (n === 0 ? 'muted' : keyTone(state))

/**
 * The GET /api/activity query the overview's recent-events widget asks for, from the widget settings;
 * null when the settings show no category at all (then there is nothing to ask).
 */
export function widgetActivityQuery(cfg: WidgetConfig): Record<string, string | number | boolean> | null {
  const cats = [cfg.widget_show_jobs && 'job', cfg.widget_show_keys && 'key', cfg.widget_show_minions && 'minion'].filter(Boolean) as string[]
  if (!cats.length) return null
  const q: Record<string, string | number | boolean> = { limit: Math.min(50, Math.max(1, cfg.widget_event_count)) }
  // All three shown is the unfiltered list, which the server counts from its per-category counters anyway.
  if (cats.length < 3) q.categories = cats.join(',')
  if (cfg.widget_hide_dispatch) q.hide_dispatch = true
  if (cfg.widget_hide_routine) q.hide_routine = true
  return q
}

/**
 * Time bounds the widget tries in turn. The API counts every matching event for `total`; with hide_dispatch or
 * hide_routine over millions of events that count alone takes most of a second, while a bounded window is counted
 * in milliseconds. A busy fleet fills the widget from the first window; a quiet one widens to the next.
 */
export const WIDGET_WINDOWS: readonly (number | undefined)[] = [1440, 10080, undefined]

/** The next WIDGET_WINDOWS step after an answer with `got` of `want` events, or null when the widget is filled or unbounded. */
export function widenWindow(step: number, got: number, want: number): number | null {
  return got < want && step + 1 < WIDGET_WINDOWS.length ? step + 1 : null
}

/** The heartbeat: whole minutes since the last event and whether that is older than the window (or there is none). */
export function heartbeat(lastTs: string | null | undefined, windowMinutes: number, now = Date.now()): { minutes: number | null; stale: boolean } {
  const t = lastTs ? new Date(lastTs).getTime() : Number.NaN
  if (Number.isNaN(t)) return { minutes: null, stale: true }
  const minutes = Math.max(0, Math.floor((now - t) / 60_000))
  return { minutes, stale: now - t > windowMinutes * 60_000 }
}

/** A long text cut to `max` characters for display; `hidden` says how many characters were left out. */
export function clip(text: string, max: number): { text: string; hidden: number } {
  return text.length <= max ? { text, hidden: 0 } : { text: text.slice(0, max), hidden: text.length - max }
}

/** Pretty JSON of any value (undefined shows as null), for <pre> blocks. */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value ?? null, null, 2) ?? 'null'
  } catch {
    return String(value)
  }
}

/** Client-side filter and page over a long list of strings (key lists can hold 50,000 ids). */
export function pageOfList(list: readonly string[], filter: string, offset: number, limit: number): { total: number; offset: number; rows: string[] } {
  const f = filter.trim().toLowerCase()
  const matched = f ? list.filter((s) => s.toLowerCase().includes(f)) : list
  // A filter can shrink the list under the current page: fall back to the last page that exists.
  const start = offset >= matched.length ? Math.max(0, Math.floor((matched.length - 1) / limit) * limit) : Math.max(0, offset)
  return { total: matched.length, offset: start, rows: matched.slice(start, start + limit) }
}

/** Parses a JSON text field of the run form: empty is undefined; otherwise it must be an array or an object as asked. */
export function parseJsonField(text: string, want: 'array' | 'object', label: string): unknown[] | Record<string, unknown> | undefined {
  if (!text.trim()) return undefined
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    throw new Error(`${label} is not valid JSON.`)
  }
  if (want === 'array' && !Array.isArray(v)) throw new Error(`${label} must be a JSON array, e.g. ["arg1", 2].`)
  if (want === 'object' && (v === null || typeof v !== 'object' || Array.isArray(v))) throw new Error(`${label} must be a JSON object, e.g. {"test": true}.`)
  return v as unknown[] | Record<string, unknown>
}

/** Splits a list target ("a, b,c") into ids; other targets stay one string. */
export function runTarget(tgt: string, tgtType: string): string | string[] {
  if (tgtType !== 'list') return tgt.trim()
  return tgt.split(',').map((s) => s.trim()).filter(Boolean)
}

/** New live events put before the shown ones: newest first, no id twice, at most `limit` rows. */
export function prependLive(shown: readonly ActivityEvent[], incoming: readonly ActivityEvent[], limit: number): { events: ActivityEvent[]; added: number } {
  const seen = new Set(shown.map((e) => e.id))
  const fresh: ActivityEvent[] = []
  for (const e of incoming) if (!seen.has(e.id)) { seen.add(e.id); fresh.push(e) }
  fresh.sort((a, b) => b.id - a.id)
  return { events: [...fresh, ...shown].slice(0, limit), added: fresh.length }
}

/** A duration in milliseconds for people: "850 ms", "12.3 s", "4 min 5 s". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—'
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)} min ${s % 60} s`
}

/** GET /api/salt/health. */
export type SaltHealth = Static<typeof HealthOut>
/** The body of `GET /api/cluster`: the running instances and what each leads. */
export type Cluster = Static<typeof ClusterOut>
/** GET /api/activity. */
export type ActivityList = Static<typeof EventListOut>
/** GET /api/minions/{id}/runs. */
export type RunList = Static<typeof RunListOut>
/** GET /api/jobs. */
export type JobList = Static<typeof JobListOut>
/** GET /api/inventory/packages. */
export type PackageList = Static<typeof PackageListOut>
/** GET /api/runs/failing-states. */
export type FailingStates = Static<typeof FailingStatesOut>

/** Whether a job function runs states (its returns are state runs with a per-state detail). */
export function isStateFun(fun: string | null | undefined): boolean {
  return !!fun && /^state\.(apply|sls|highstate|sls_id|single|top|template|template_str|low|high)$/.test(fun)
}

/** The function with the state files of a state job beside it: "state.apply demo,web". */
export function jobFunLabel(j: Pick<Job, 'fun'> & Partial<Pick<Job, 'sls'>>): string {
  const fun = j.fun ?? '—'
  const sls = j.sls ?? []
  return isStateFun(j.fun) && sls.length ? `${fun} ${sls.join(',')}` : fun
}

/**
 * A job's positional and keyword arguments as the job page shows them, each null when there are none: `kwargs` as
 * `name=value` lines (values as JSON). A server without `arguments` gives the raw `arg` list as positional.
 */
export function jobArgs(j: Pick<Job, 'arg'> & Partial<Pick<Job, 'arguments' | 'kwargs'>>): { positional: unknown[] | null; keyword: string[] | null } {
  const pos = j.arguments === undefined ? (j.arg === null ? null : Array.isArray(j.arg) ? j.arg : [j.arg]) : j.arguments
  const kw = j.kwargs ? Object.entries(j.kwargs).map(([k, v]) => `${k}=${JSON.stringify(v)}`) : []
  return { positional: pos && pos.length ? pos : null, keyword: kw.length ? kw : null }
}

/** A job's outcome in words: "3 returned, 1 failed, 0 not returned" (not returned only when the expected minions are known). */
export function jobOutcome(j: Pick<Job, 'returned' | 'minions'> & Partial<Pick<Job, 'failed'>>): string {
  const parts = [`${j.returned.toLocaleString()} returned`]
  if (j.failed !== undefined) parts.push(`${j.failed.toLocaleString()} failed`)
  if (j.minions) parts.push(`${Math.max(0, j.minions.length - j.returned).toLocaleString()} not returned`)
  return parts.join(', ')
}

/** A state's result as a symbol and a word (never colour alone); a dry run's undecided state "would change". */
export function stateResult(result: boolean | null, test: boolean, changed = false): { symbol: string; word: string; tone: 'ok' | 'bad' | 'info' | 'muted' } {
  if (result === true) return { symbol: '✔', word: 'succeeded', tone: 'ok' }
  if (result === false) return { symbol: '✖', word: 'failed', tone: 'bad' }
  if (test) return { symbol: '—', word: changed ? 'would change' : 'would run', tone: 'info' }
  return { symbol: '—', word: 'not run', tone: 'muted' }
}

/** One side of a diff in words: "absent", "failed", "succeeded", "changed", "would change". */
export function outcomeWord(o: Outcome | null): string {
  if (!o) return 'absent'
  if (o.result === false) return 'failed'
  if (o.result === null) return o.changed ? 'would change' : 'not run'
  return o.changed ? 'changed' : 'succeeded'
}

/** A run's counts as the highstate outputter words them: a dry run "would change" rather than "changed". */
export function runCountsText(r: Pick<Run, 'pass_count' | 'fail_count' | 'change_count' | 'total_count' | 'test'>): string {
  const change = r.test ? 'would change' : 'changed'
  return `${r.pass_count.toLocaleString()} succeeded, ${r.fail_count.toLocaleString()} failed, ${r.change_count.toLocaleString()} ${change}, ${r.total_count.toLocaleString()} total`
}

/** Text cut to its first `lines` lines: `rest` is how many lines were left out (0 when it fits). */
export function headLines(text: string, lines: number): { head: string; rest: number } {
  const all = text.split('\n')
  return all.length <= lines ? { head: text, rest: 0 } : { head: all.slice(0, lines).join('\n'), rest: all.length - lines }
}

/**
 * A state's changes split for display: unified diffs (a string under a `diff` key, as file.managed reports) apart,
 * and the rest as pretty JSON; null when there are none.
 */
export function splitChanges(changes: Record<string, unknown> | null | undefined): { diff: string | null; rest: string | null } | null {
  if (!changes || typeof changes !== 'object' || !Object.keys(changes).length) return null
  const { diff, ...rest } = changes as Record<string, unknown>
  if (typeof diff !== 'string') return { diff: null, rest: prettyJson(changes) }
  return { diff, rest: Object.keys(rest).length ? prettyJson(rest) : null }
}

/** The trend's newest point in words, for the chart's accessible name. */
export function trendSummary(t: Trend): string {
  const last = t.points[t.points.length - 1]
  if (!last) return 'No run history yet.'
  const first = t.points[0]!
  return `Minions by last run over ${t.points.length} day${t.points.length === 1 ? '' : 's'} (${first.day} to ${last.day}); on ${last.day}: ` +
    `${last.healthy} healthy, ${last.changed} changed, ${last.unhealthy} unhealthy, ${last.blocked} blocked, ${last.never} never run.`
}

/** The order the trend chart stacks the statuses in, bottom up. */
export const TREND_STATUSES = ['healthy', 'changed', 'blocked', 'unhealthy', 'never'] as const

/**
 * The stacked bars of the trend chart in a `width`×`height` box: one column per day, one rectangle per non-zero status,
 * heights scaled to the largest day total.
 */
export function trendBars(t: Trend, width: number, height: number): { day: string; status: (typeof TREND_STATUSES)[number]; x: number; y: number; w: number; h: number }[] {
  const n = t.points.length
  if (!n) return []
  const max = Math.max(1, ...t.points.map((p) => TREND_STATUSES.reduce((a, s) => a + p[s], 0)))
  const step = width / n
  const w = Math.max(1, step - (step > 4 ? 1 : 0))
  const out: ReturnType<typeof trendBars> = []
  t.points.forEach((p, i) => {
    let y = height
    for (const status of TREND_STATUSES) {
      if (!p[status]) continue
      const h = (p[status] / max) * height
      y -= h
      out.push({ day: p.day, status, x: Math.round(i * step * 100) / 100, y: Math.round(y * 100) / 100, w: Math.round(w * 100) / 100, h: Math.round(h * 100) / 100 })
    }
  })
  return out
}

/** The sentence naming the salt sources a job or kill left out (contract §15 "Several masters"); '' when none. */
export const skippedSentence = (skipped: { source: string; reason: string }[] | undefined) =>
  skipped?.length ? `Not sent through ${skipped.map((s) => `salt source ${s.source} (${s.reason})`).join(', ')}.` : ''
