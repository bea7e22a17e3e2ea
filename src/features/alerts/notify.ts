/**
 * From the outbox to deliveries (contract §11): a rule's transitions of one group window become one notification per
 * status, listing every subject, and one delivery per enabled channel of the rule; silenced alerts are left out. Also
 * re-sends still-firing alerts after the rule's renotify_minutes.
 */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import { iso } from '../../lib/clock'
import { globMatch } from '../../lib/glob'
import { newId } from '../../lib/ids'
import { enabledChannelIds } from './channel-row-store'
import { alertsToTell, insertNotification, insertRenotifies, markNotified, markTransitions, rulesWaitingSince, waitingTransitions } from './outbox-store'
import { ruleById, silencesInForce } from './rule-store'

/** Whether a silence covers an alert now. */
async function silencedSet(q: Queryable, now: number) {
  const silences = await silencesInForce(q, now)
  return (ruleId: string, subject: string) => silences.some((s) => (s.rule_id === null || s.rule_id === ruleId) && globMatch(s.subject_glob, subject))
}

/** Turns the transitions whose group window has passed into notifications and deliveries; returns the notifications made. */
export async function groupTransitions(deps: AppDeps, groupSeconds: number): Promise<number> {
  const now = deps.clock.now()
  const cut = now - groupSeconds * 1000
  // Rules with a transition waiting for longer than the window: all of that rule's waiting transitions go together.
  const rules = await rulesWaitingSince(deps.db, cut)
  if (!rules.length) return 0
  const silenced = await silencedSet(deps.db, now)
  return deps.db.tx(async (tx) => {
    let made = 0
    for (const ruleId of rules) {
      const rule = await ruleById(tx, ruleId)
      const pending = await waitingTransitions(tx, ruleId)
      if (!rule) {
        await markTransitions(tx, pending.map((p) => p.id), 'rule-deleted')
        continue
      }
      for (const status of ['firing', 'resolved'] as const) {
        const group = pending.filter((p) => p.status === status)
        if (!group.length) continue
        const alerts = (await alertsToTell(tx, [...new Set(group.map((g) => g.alert_id))])).filter((a) => !silenced(rule.id, a.subject))
        if (!alerts.length) {
          await markTransitions(tx, group.map((p) => p.id), 'silenced')
          continue
        }
        const id = newId()
        const body = {
          id, rule: { id: rule.id, name: rule.name, kind: rule.kind }, status, sent_at: iso(now),
          alerts: alerts.map((a) => ({ id: a.id, subject: a.subject, summary: a.summary, first_seen_at: iso(a.first_seen_at), details: JSON.parse(a.details) })),
        }
        const channels = await enabledChannelIds(tx, JSON.parse(rule.channel_ids) as string[])
        await insertNotification(tx, { id, rule_id: rule.id, status, body: JSON.stringify(body), created_at: now }, channels.map((c) => ({ id: newId(), channelId: c })))
        await markTransitions(tx, group.map((p) => p.id), id)
        await markNotified(tx, alerts.map((a) => a.id), now)
        made++
      }
    }
    return made
  })
}

/** Writes a renotify transition for each alert still firing past its rule's renotify_minutes since it was last told. */
export const renotify = (deps: AppDeps): Promise<number> => insertRenotifies(deps.db, deps.clock.now())
