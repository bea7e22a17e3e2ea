/** Records of the alerts API (contract §11) as the dashboard reads them. */
import type { ChannelType } from '../../../features/alerts/channels/types'

/** One alert. */
export interface Alert {
  id: string
  rule_id: string
  rule_name: string
  kind: string
  subject: string
  state: 'firing' | 'resolved'
  summary: string
  count: number
  first_seen_at: string
  last_seen_at: string
  resolved_at: string | null
  acked_by: string | null
  acked_at: string | null
  details: Record<string, unknown>
}
/** One rule. */
export interface Rule {
  id: string
  name: string
  kind: string
  minion_glob: string
  params: { fun_glob?: string; for_minutes?: number; min_severity?: string }
  channel_ids: string[]
  enabled: boolean
  renotify_minutes: number
}
/** One channel; secrets only as *_set flags. */
export interface Channel {
  id: string
  name: string
  type: ChannelType
  config: Record<string, unknown>
  enabled: boolean
}
/** One silence. */
export interface Silence {
  id: string
  rule_id: string | null
  subject_glob: string
  ends_at: string
  comment: string
  created_by: string
}
/** One delivery of a notification to a channel. */
export interface Delivery {
  id: string
  notification_id: string
  channel_id: string
  status: 'pending' | 'sent' | 'failed'
  attempts: number
  last_error: string | null
  next_attempt_at: string | null
  sent_at: string | null
}

/** The rule kinds, with what each watches for. */
export const KINDS: Record<string, string> = {
  run_failed: 'a state run fails', run_blocked: 'a state run does not run', run_changed: 'a state run changes something',
  minion_offline: 'a minion is offline for a while', key_pending: 'a key waits for acceptance', salt_unreachable: 'salt-api does not answer for a while',
  master_unreachable: 'the salt-master does not answer (through salt-api) for a while',
  vulnerable: 'a minion has a vulnerability at or above a severity',
}
