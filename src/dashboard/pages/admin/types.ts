/** Shapes of the admin API answers the pages read (contract §3–§5, §9). */
import type { PollerStatus, StreamStatus } from '../../../lib/poller-status'

export type { PollerStatus } from '../../../lib/poller-status'

/** The salt section of SettingsOut. */
export interface SaltSettings {
  url: string | null
  username: string | null
  password_set: boolean
  verify: boolean
  eauth: string
  presence_method: string
}

/** GET /api/admin/settings. */
export interface SettingsOut {
  salt: SaltSettings
  pollers: Record<string, number | boolean>
  widget: Record<string, number | boolean>
  logging: { log_format: string }
  updated_at: string
}

/** GET /api/admin/settings/status. */
export interface SettingsStatus {
  configured: boolean
  missing: string[]
}

/** The answer of both connection tests. */
export interface TestResult {
  ok: boolean
  detail: string
  minion_count: number | null
}

/** GET /api/admin/pollers. */
export interface PollersOut {
  pollers: PollerStatus[]
  event_stream: StreamStatus
}

/** A role reference inside a user. */
export interface RoleRef {
  id: string
  name: string
}

/** A user as the users API returns it. */
export interface User {
  id: string
  username: string
  display_name: string
  must_change_pw: boolean
  is_active: boolean
  is_builtin: boolean
  /** Who checks the password: Saltdeck or a directory. */
  source: 'local' | 'ldap' | 'oidc'
  roles: RoleRef[]
  created_at: string
  updated_at: string
}

/** A role (list element). */
export interface Role {
  id: string
  name: string
  is_builtin: boolean
  description: string
}

/** A role with its grants. */
export interface RoleDetail extends Role {
  /** target_glob: the minions an execute grant is scoped to (salt's glob on ids; `*` for any other grant). */
  permissions: { id: string; verb: string; resource_glob: string; target_glob: string }[]
}

/** An API token as listed (never its secret). */
export interface ApiToken {
  id: string
  name: string
  created_at: string
  expires_at: string | null
}

/** One audit log entry. */
export interface AuditEntry {
  id: number
  ts: string
  username: string
  action: string
  target: string | null
  ok: boolean
  detail: string | null
  client: string | null
}
