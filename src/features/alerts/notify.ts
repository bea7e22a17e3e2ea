/**
 * From the outbox to deliveries (contract §11): a rule's transitions of one group window become one notification per
 * status, listing every subject, and one delivery per enabled channel of the rule; silenced alerts are left out. Also
 * re-sends still-firing alerts after the rule's renotify_minutes.
 */
import type { AppDeps } from '../../deps'
import { iso } from '../../lib/clock'
import { globMatch } from '../../lib/glob'
import { newId } from '../../lib/ids'

interface Pending {
  id: number
  rule_id: string
  alert_id: string
  status: 'firing' | 'resolved'
  at: number
}

/** Whether a silence covers an alert now. */
function silencedSet(deps: AppDeps, now: number) {
  const silences = deps.db.$client.query<{ rule_id: string | null; subject_glob: string }, [number]>('SELECT rule_id, subject_glob FROM alert_silences WHERE ends_at > ?1').all(now)
  return (ruleId: string, subject: string) => silences.some((s) => (s.rule_id === null || s.rule_id === ruleId) && globMatch(s.subject_glob, subject))
}

/** Turns the transitions whose group window has passed into notifications and deliveries; returns the notifications made. */
export function groupTransitions(deps: AppDeps, groupSeconds: number): number {
  const db = deps.db.$client
  const now = deps.clock.now()
  const cut = now - groupSeconds * 1000
  // Rules with a transition waiting for longer than the window: all of that rule's waiting transitions go together.
  const rules = db.query<{ rule_id: string }, [number]>('SELECT DISTINCT rule_id FROM alert_transitions WHERE notification_id IS NULL GROUP BY rule_id HAVING min(at) <= ?1').all(cut)
  if (!rules.length) return 0
  const silenced = silencedSet(deps, now)
  let made = 0
  db.transaction(() => {
    for (const { rule_id } of rules) {
      const rule = db.query<{ id: string; name: string; kind: string; channel_ids: string }, [string]>('SELECT id, name, kind, channel_ids FROM alert_rules WHERE id = ?1').get(rule_id)
      const pending = db.query<Pending, [string]>('SELECT id, rule_id, alert_id, status, at FROM alert_transitions WHERE notification_id IS NULL AND rule_id = ?1 ORDER BY id').all(rule_id)
      const mark = db.prepare('UPDATE alert_transitions SET notification_id = ?2 WHERE id = ?1')
      if (!rule) {
        for (const p of pending) mark.run(p.id, 'rule-deleted')
        continue
      }
      for (const status of ['firing', 'resolved'] as const) {
        const group = pending.filter((p) => p.status === status)
        if (!group.length) continue
        const alerts = db
          .query<{ id: string; subject: string; summary: string; first_seen_at: number; details: string }, [string]>(
            'SELECT id, subject, summary, first_seen_at, details FROM alerts WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY subject',
          )
          .all(JSON.stringify([...new Set(group.map((g) => g.alert_id))]))
          .filter((a) => !silenced(rule.id, a.subject))
        if (!alerts.length) {
          for (const p of group) mark.run(p.id, 'silenced')
          continue
        }
        const id = newId()
        const body = {
          id, rule: { id: rule.id, name: rule.name, kind: rule.kind }, status, sent_at: iso(now),
          alerts: alerts.map((a) => ({ id: a.id, subject: a.subject, summary: a.summary, first_seen_at: iso(a.first_seen_at), details: JSON.parse(a.details) })),
        }
        db.query('INSERT INTO alert_notifications (id, rule_id, status, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5)').run(id, rule.id, status, JSON.stringify(body), now)
        const channels = db
          .query<{ id: string }, [string]>('SELECT id FROM alert_channels WHERE enabled = 1 AND id IN (SELECT value FROM json_each(?1))')
          .all(rule.channel_ids)
        for (const c of channels)
          db.query("INSERT INTO alert_deliveries (id, notification_id, channel_id, status, attempts, next_attempt_at, created_at) VALUES (?1, ?2, ?3, 'pending', 0, ?4, ?4)").run(newId(), id, c.id, now)
        for (const p of group) mark.run(p.id, id)
        db.query('UPDATE alerts SET notified_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))').run(JSON.stringify(alerts.map((a) => a.id)), now)
        made++
      }
    }
  })()
  return made
}

/** Writes a renotify transition for each alert still firing past its rule's renotify_minutes since it was last told. */
export function renotify(deps: AppDeps): number {
  const now = deps.clock.now()
  return deps.db.$client
    .query(
      `INSERT INTO alert_transitions (rule_id, alert_id, status, at)
       SELECT a.rule_id, a.id, 'firing', ?1 FROM alerts a JOIN alert_rules r ON r.id = a.rule_id
       WHERE a.state = 'firing' AND r.enabled = 1 AND r.renotify_minutes > 0 AND a.notified_at IS NOT NULL
         AND a.notified_at <= ?1 - r.renotify_minutes * 60000
         AND NOT EXISTS (SELECT 1 FROM alert_transitions t WHERE t.alert_id = a.id AND t.notification_id IS NULL)`,
    )
    .run(now).changes
}
