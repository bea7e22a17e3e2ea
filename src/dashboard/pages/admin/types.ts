/** Shapes of the admin API answers the pages read (contract §3–§5, §9), from the routes' answer schemas. */
import type { Static } from '@sinclair/typebox'
import type { AuditEntryOut, AuditListOut } from '../../../features/audit/schema'
import type { TokenCreatedOut, TokenListOut, TokenOut } from '../../../features/auth/schema'
import type { RoleDetailOut, RoleListOut, RoleOut } from '../../../features/roles/schema'
import type { PollersOut as PollersSchema, SaltTestOut } from '../../../features/salt-actions/schema'
import type { SettingsOut as SettingsSchema, SettingsStatusOut } from '../../../features/settings/schema'
import type { UserListOut, UserOut, UserRoleOut, UserRolesOut } from '../../../features/users/schema'

/** GET /api/admin/settings. */
export type SettingsOut = Static<typeof SettingsSchema>

/** The salt section of SettingsOut. */
export type SaltSettings = SettingsOut['salt']

/** GET /api/admin/settings/status. */
export type SettingsStatus = Static<typeof SettingsStatusOut>

/** The answer of both connection tests. */
export type TestResult = Static<typeof SaltTestOut>

/** GET /api/admin/pollers. */
export type PollersOut = Static<typeof PollersSchema>

/** One poller's state. */
export type PollerStatus = PollersOut['pollers'][number]

/** A role reference inside a user. */
export type RoleRef = Static<typeof UserRoleOut>

/** A user as the users API returns it; `source` says who checks the password: Saltdeck or a directory. */
export type User = Static<typeof UserOut>

/** GET /api/users. */
export type UserList = Static<typeof UserListOut>

/** GET and PUT /api/users/{id}/roles. */
export type UserRoles = Static<typeof UserRolesOut>

/** A role (list element). */
export type Role = Static<typeof RoleOut>

/** GET /api/roles. */
export type RoleList = Static<typeof RoleListOut>

/** A role with its grants (target_glob: the minions an execute grant is scoped to; `*` for any other grant). */
export type RoleDetail = Static<typeof RoleDetailOut>

/** An API token as listed (never its secret). */
export type ApiToken = Static<typeof TokenOut>

/** GET /api/auth/tokens. */
export type TokenList = Static<typeof TokenListOut>

/** The answer of POST /api/auth/tokens: the only time the secret is seen. */
export type NewToken = Static<typeof TokenCreatedOut>

/** One audit log entry. */
export type AuditEntry = Static<typeof AuditEntryOut>

/** GET /api/audit. */
export type AuditList = Static<typeof AuditListOut>
