/**
 * Alert state changes (contract §11): one open alert per (rule, subject); a repeat bumps its count; resolving closes
 * it. Every change that someone should hear of is written to the outbox (alert_transitions) in the same transaction.
 */
import type { AppDeps } from '../../deps'
import { newId } from '../../lib/ids'

/** A rule as the evaluators read it. */
export interface RuleRow {
  id: string
  name: string
  kind: string
  minion_glob: string
  params: string
  channel_ids: string
  enabled: number
  renotify_minutes: number
  created_at: number
}

/** The enabled rules of some kinds. */
export function enabledRules(deps: AppDeps, kinds: string[]): RuleRow[] {
  return deps.db.$client
    .query<RuleRow, [string]>('SELECT * FROM alert_rules WHERE enabled = 1 AND kind IN (SELECT value FROM json_each(?1)) ORDER BY created_at')
    .all(JSON.stringify(kinds))
}

/** A rule's parameters. */
export const paramsOf = (r: RuleRow) => JSON.parse(r.params) as Record<string, unknown>

/** Writes an outbox entry for a transition. */
function transition(deps: AppDeps, ruleId: string, alertId: string, status: 'firing' | 'resolved', at: number) {
  deps.db.$client.query('INSERT INTO alert_transitions (rule_id, alert_id, status, at) VALUES (?1, ?2, ?3, ?4)').run(ruleId, alertId, status, at)
}

/** Fires (or repeats) the rule's alert for a subject; a new alert goes to the outbox. Returns whether it was new. */
export function fire(deps: AppDeps, rule: RuleRow, subject: string, summary: string, details: Record<string, unknown>, at: number): boolean {
  const r = deps.db.$client
    .query<{ id: string; count: number }, [string, string, string, string, number, string]>(
      `INSERT INTO alerts (id, rule_id, subject, state, summary, count, first_seen_at, last_seen_at, details)
       VALUES (?1, ?2, ?3, 'firing', ?4, 1, ?5, ?5, ?6)
       ON CONFLICT (rule_id, subject) WHERE state = 'firing'
       DO UPDATE SET count = count + 1, last_seen_at = max(last_seen_at, excluded.last_seen_at), summary = excluded.summary, details = excluded.details
       RETURNING id, count`,
    )
    .get(newId(), rule.id, subject, summary, at, JSON.stringify(details))!
  if (r.count === 1) transition(deps, rule.id, r.id, 'firing', at)
  return r.count === 1
}

/** An alert that is its own occurrence (run_changed): stored resolved at once, and told as firing. */
export function occurrence(deps: AppDeps, rule: RuleRow, subject: string, summary: string, details: Record<string, unknown>, at: number) {
  const id = newId()
  deps.db.$client
    .query(
      `INSERT INTO alerts (id, rule_id, subject, state, summary, count, first_seen_at, last_seen_at, resolved_at, details)
       VALUES (?1, ?2, ?3, 'resolved', ?4, 1, ?5, ?5, ?5, ?6)`,
    )
    .run(id, rule.id, subject, summary, at, JSON.stringify(details))
  transition(deps, rule.id, id, 'firing', at)
}

/**
 * Resolves the rule's open alert for a subject, if any; the resolution goes to the outbox. Its summary becomes
 * `summary`, what the resolved message says (a resolved run_failed must not still read "state.apply failed").
 */
export function resolve(deps: AppDeps, rule: RuleRow, subject: string, at: number, summary: string): boolean {
  const r = deps.db.$client
    .query<{ id: string }, [string, string, number, string]>("UPDATE alerts SET state = 'resolved', resolved_at = ?3, summary = ?4 WHERE rule_id = ?1 AND subject = ?2 AND state = 'firing' RETURNING id")
    .get(rule.id, subject, at, summary)
  if (r) transition(deps, rule.id, r.id, 'resolved', at)
  return !!r
}

/** The subjects a rule has firing now. */
export function firingSubjects(deps: AppDeps, ruleId: string): Set<string> {
  return new Set(deps.db.$client.query<{ subject: string }, [string]>("SELECT subject FROM alerts WHERE rule_id = ?1 AND state = 'firing'").all(ruleId).map((r) => r.subject))
}
