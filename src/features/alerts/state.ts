/**
 * Alert state changes (contract §11): one open alert per (rule, subject); a repeat bumps its count; resolving closes
 * it. Every change that someone should hear of is written to the outbox (alert_transitions) in the same transaction:
 * each function takes the Queryable it runs on (ingest's transaction, or the engine).
 */
import type { Queryable } from '../../db/engine'
import { newId } from '../../lib/ids'
import { firingSubjectsOf, insertOccurrence, insertTransition, resolveFiring, upsertFiring } from './alert-store'
import { enabledRulesOf, type RuleRow } from './rule-store'

export type { RuleRow } from './rule-store'

/** The enabled rules of some kinds. */
export const enabledRules = (q: Queryable, kinds: readonly string[]): Promise<RuleRow[]> => enabledRulesOf(q, kinds)

/** A rule's parameters. */
export const paramsOf = (r: RuleRow) => JSON.parse(r.params) as Record<string, unknown>

/** Fires (or repeats) the rule's alert for a subject; a new alert goes to the outbox. Returns whether it was new. */
export async function fire(q: Queryable, rule: RuleRow, subject: string, summary: string, details: Record<string, unknown>, at: number): Promise<boolean> {
  const r = await upsertFiring(q, { id: newId(), ruleId: rule.id, subject, summary, at, details: JSON.stringify(details) })
  if (r.count === 1) await insertTransition(q, rule.id, r.id, 'firing', at)
  return r.count === 1
}

/** An alert that is its own occurrence (run_changed): stored resolved at once, and told as firing. */
export async function occurrence(q: Queryable, rule: RuleRow, subject: string, summary: string, details: Record<string, unknown>, at: number) {
  const id = newId()
  await insertOccurrence(q, { id, ruleId: rule.id, subject, summary, at, details: JSON.stringify(details) })
  await insertTransition(q, rule.id, id, 'firing', at)
}

/**
 * Resolves the rule's open alert for a subject, if any; the resolution goes to the outbox. Its summary becomes
 * `summary`, what the resolved message says (a resolved run_failed must not still read "state.apply failed").
 */
export async function resolve(q: Queryable, rule: RuleRow, subject: string, at: number, summary: string): Promise<boolean> {
  const id = await resolveFiring(q, rule.id, subject, at, summary)
  if (id) await insertTransition(q, rule.id, id, 'resolved', at)
  return !!id
}

/** The subjects a rule has firing now. */
export const firingSubjects = async (q: Queryable, ruleId: string): Promise<Set<string>> => new Set(await firingSubjectsOf(q, ruleId))
