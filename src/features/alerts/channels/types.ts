/** What the channel senders take and give: the channel types, the contract's notification (§11) and the outcome of one send. */

/**
 * The channel types (contract §11), in the order the dashboard offers them. The registry (registry.ts) must hold
 * exactly these, so a type added here and forgotten there (or the reverse) is a compile error. No imports: the
 * dashboard reads the type from here.
 */
export const CHANNEL_TYPES = ['webhook', 'slack', 'email'] as const
/** A channel type. */
export type ChannelType = (typeof CHANNEL_TYPES)[number]

/** One alert as a notification lists it. */
export interface NotifiedAlert {
  id: string
  subject: string
  summary: string
  first_seen_at: string
  details: Record<string, unknown>
}

/** The webhook body of contract §11; `id` is stable across retries. */
export interface Notification {
  id: string
  rule: { id: string; name: string; kind: string }
  status: 'firing' | 'resolved'
  alerts: NotifiedAlert[]
  sent_at: string
}

/** The outcome of one send, as a sentence for the delivery log and the channel test. */
export interface SendResult {
  ok: boolean
  detail: string
}

/** How one send runs: links point at publicUrl when set; it gives up after timeoutMs; outboundAllow is SALTDECK_OUTBOUND_ALLOW. */
export interface SendOptions {
  publicUrl: string | null
  timeoutMs: number
  outboundAllow?: string | null
}

/** Subjects listed by name in a message; the rest are counted ("and 19,950 more"). */
export const LISTED = 20

/** The first LISTED alerts and how many are left out. */
export const listed = (n: Notification) => ({ shown: n.alerts.slice(0, LISTED), more: Math.max(0, n.alerts.length - LISTED) })

/** The headline of a notification: "FIRING: Failed runs (3 minions)". */
export const headline = (n: Notification) => `${n.status.toUpperCase()}: ${n.rule.name} (${n.alerts.length.toLocaleString('en-US')} ${n.alerts.length === 1 ? 'subject' : 'subjects'})`

/** Where the alerts are seen in Saltdeck; null without a public URL. */
export const alertsLink = (o: SendOptions) => (o.publicUrl ? `${o.publicUrl.replace(/\/$/, '')}/#/alerts` : null)
