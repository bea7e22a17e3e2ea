/** What the settings forms show for each stored setting: label, unit, bounds (contract §5, settings/schema.ts). */

/** An integer setting: plain-words label, unit for the hint, inclusive bounds. */
export interface IntField {
  kind: 'int'
  label: string
  min: number
  max: number
  /** Extra words for the hint, e.g. "0 = off". */
  note?: string
}

/** A boolean setting shown as a checkbox. */
export interface BoolField {
  kind: 'bool'
  label: string
}

/** One form field. */
export type FieldSpec = IntField | BoolField

const int = (label: string, min: number, max: number, note?: string): IntField => ({ kind: 'int', label, min, max, note })
const bool = (label: string): BoolField => ({ kind: 'bool', label })

/** The ten poller settings in the order the form shows them. */
export const POLLER_FORM = {
  minion_state_keys_interval_seconds: int('Keys poll interval (seconds)', 0, 86400, '0 = off'),
  minion_state_presence_interval_seconds: int('Presence poll interval (seconds)', 0, 86400, '0 = off'),
  minion_state_grains_interval_seconds: int('Grains poll interval (seconds)', 0, 86400, '0 = off'),
  // Despite its name, this one delay is shared by the keys, presence, grains, jobs and fleet pollers.
  minion_state_initial_delay_seconds: int('Keys, presence, grains, jobs and fleet initial delay (seconds)', 0, 3600, '0 = at once'),
  jobs_poll_interval_seconds: int('Jobs poll interval (seconds)', 0, 86400, '0 = off'),
  fleet_poll_interval_seconds: int('Fleet (state runs) poll interval (seconds)', 0, 86400, '0 = off'),
  inventory_refresh_minutes: int('Inventory refresh interval (minutes)', 0, 1440, '0 = off'),
  inventory_refresh_initial_delay_s: int('Inventory refresh initial delay (seconds)', 0, 3600),
  event_stream_enabled: bool('Consume the salt-api event stream'),
  event_stream_retention_days: int('Activity retention (days)', 1, 365, 'older events are deleted'),
} as const satisfies Record<string, FieldSpec>

/** The seven widget settings in form order. */
export const WIDGET_FORM = {
  widget_hide_dispatch: bool('Hide job dispatch events (job.new)'),
  widget_hide_routine: bool('Hide routine returns (successful, no changes)'),
  widget_show_jobs: bool('Show job events'),
  widget_show_keys: bool('Show key events'),
  widget_show_minions: bool('Show minion events'),
  widget_event_count: int('Events shown', 1, 50),
  widget_heartbeat_minutes: int('Heartbeat window (minutes)', 5, 1440),
} as const satisfies Record<string, FieldSpec>

/** salt-api eauth back ends the settings accept. */
export const EAUTH_VALUES = ['pam', 'sharedsecret', 'ldap', 'file', 'auto'] as const

/** How presence is polled (the salt section's presence_method). */
export const PRESENCE_METHODS = ['present', 'status'] as const

/** Log line formats. */
export const LOG_FORMATS = ['json', 'text'] as const

/** The hint under an integer field: its bounds and note. */
export function intHint(f: IntField): string {
  return `${f.min} to ${f.max}${f.note ? `; ${f.note}` : ''}.`
}

/** The salt connection's parts by the API's key in `GET /api/admin/settings/status` `missing`, in the form's words. */
export const SALT_PART_WORDS: Record<string, string> = { 'salt.url': 'the salt-api URL', 'salt.username': 'the username', 'salt.password': 'the password' }

/** "Enter the salt-api URL, the username and the password" for the missing keys; an unknown key is shown as it is. */
export function missingSaltWords(missing: string[]): string {
  const words = missing.map((k) => SALT_PART_WORDS[k] ?? k)
  const list = words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)}` : words[0] ?? ''
  return `Enter ${list} below.`
}
