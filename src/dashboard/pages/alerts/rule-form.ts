/** The alert rule form's values and the bodies it sends, and where an alert row links (issue 23 item 1). */
import { readInt } from '../../lib/form-values'
import type { Alert, Rule } from './types'

/** Kinds whose rules watch runs and take a function glob. */
export const RUN_KINDS = ['run_failed', 'run_blocked', 'run_changed']
/** Kinds with a "for minutes" parameter: [default, maximum]. */
export const TIMED: Record<string, [number, number]> = { minion_offline: [10, 10080], salt_unreachable: [5, 1440], master_unreachable: [2, 1440] }
/** Kinds about the whole fleet: no minion glob is taken or shown (the API refuses one other than "*"). */
export const FLEET_KINDS = ['salt_unreachable', 'master_unreachable']
/** The thresholds of the vulnerable kind, lowest first; the API's default is high. */
export const MIN_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const

/** The form's fields as typed. */
export interface RuleForm {
  name: string
  kind: string
  minion_glob: string
  fun_glob: string
  for_minutes: string
  min_severity: string
  renotify: string
  channel_ids: string[]
}

/** An empty form: what "New rule" shows, and again after a rule is created (no stale minion glob). */
export const blankRule = (): RuleForm => ({ name: '', kind: 'run_failed', minion_glob: '*', fun_glob: '*', for_minutes: '', min_severity: 'high', renotify: '0', channel_ids: [] })

/** The form filled from a stored rule, for editing it. */
export function formOf(r: Rule): RuleForm {
  return {
    name: r.name, kind: r.kind, minion_glob: r.minion_glob, fun_glob: String(r.params.fun_glob ?? '*'),
    for_minutes: r.params.for_minutes === undefined ? '' : String(r.params.for_minutes), min_severity: String(r.params.min_severity ?? 'high'),
    renotify: String(r.renotify_minutes), channel_ids: [...r.channel_ids],
  }
}

/** The kind's parameters from the form. */
export function paramsOf(f: RuleForm): Record<string, unknown> {
  if (RUN_KINDS.includes(f.kind)) return { fun_glob: f.fun_glob }
  if (TIMED[f.kind]) return f.for_minutes.trim() ? { for_minutes: readInt(f.for_minutes) } : {}
  if (f.kind === 'vulnerable') return { min_severity: f.min_severity }
  return {}
}

/** The POST body of a new rule; a fleet-wide kind sends no minion glob. */
export function createBody(f: RuleForm) {
  return {
    name: f.name, kind: f.kind, ...(FLEET_KINDS.includes(f.kind) ? {} : { minion_glob: f.minion_glob }), params: paramsOf(f),
    channel_ids: f.channel_ids, renotify_minutes: readInt(f.renotify),
  }
}

/** The PATCH body of an edited rule (its kind stays); a fleet-wide kind sends no minion glob. */
export function patchBody(f: RuleForm) {
  const { kind: _, ...rest } = createBody(f)
  return rest
}

/** How a rule's minions read in the list: the glob, or "whole fleet" for a fleet-wide kind. */
export const minionsText = (r: Pick<Rule, 'kind' | 'minion_glob'>) => (FLEET_KINDS.includes(r.kind) ? null : r.minion_glob)

/** The pages an alert is about: its minion, and its run or job, a vulnerability, the keys or Salt health. */
export function alertLinks(a: Pick<Alert, 'kind' | 'subject' | 'details'>): { label: string; path: string }[] {
  const jid = typeof a.details.jid === 'string' ? a.details.jid : null
  const minion = { label: a.subject, path: `/minions/${encodeURIComponent(a.subject)}` }
  if (a.kind === 'salt_unreachable') return [{ label: 'Salt health', path: '/salt-health' }]
  if (RUN_KINDS.includes(a.kind) && jid)
    return [minion, { label: 'Run', path: `/minions/${encodeURIComponent(a.subject)}/runs/${encodeURIComponent(jid)}` }, { label: 'Job', path: `/jobs/${encodeURIComponent(jid)}` }]
  if (a.kind === 'key_pending') return [minion, { label: 'Keys', path: '/keys' }]
  if (a.kind === 'vulnerable') {
    const ids = Array.isArray(a.details.vulnerability_ids) ? (a.details.vulnerability_ids as unknown[]).filter((x): x is string => typeof x === 'string') : []
    return [minion, ...ids.slice(0, 3).map((id) => ({ label: id, path: `/vulns/${encodeURIComponent(id)}` }))]
  }
  return [minion]
}
