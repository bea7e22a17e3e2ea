/** Shapes of the admin API answers the pages read (contract §3–§5, §9). */
import type { Static } from '@sinclair/typebox'
import type { PollerStatus, StreamStatus } from '../../../lib/poller-status'
import type { RoleDetailOut, RoleOut } from '../../../features/roles/schema'
import type { SaltTestOut } from '../../../features/salt-actions/schema'
import type { SettingsStatusOut } from '../../../features/settings/schema'
import type { UserOut, UserRoleOut } from '../../../features/users/schema'

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
export type SettingsStatus = Static<typeof SettingsStatusOut>

/** The answer of both connection tests. */
export type TestResult = Static<typeof SaltTestOut>

/** GET /api/admin/pollers. */
export interface PollersOut {
  pollers: PollerStatus[]
  event_stream: StreamStatus
}

/** A role reference inside a user. */
export type RoleRef = Static<typeof UserRoleOut>

/** A user as the users API returns it; `source` says who checks the password: Saltdeck or a directory. */
export type User = Static<typeof UserOut>

/** A role (list element). */
export type Role = Static<typeof RoleOut>

/** A role with its grants (target_glob: the minions an execute grant is scoped to; `*` for any other grant). */
export type RoleDetail = Static<typeof RoleDetailOut>

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
