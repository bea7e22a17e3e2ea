/** Users, roles, grants, sessions and API tokens. */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from 'drizzle-orm/sqlite-core'

/**
 * Users; username_key is the lower-cased username for case-insensitive uniqueness. `source` says who checks the
 * password: Saltdeck (`local`) or a directory (`ldap`, `oidc`); a directory user's password_hash is empty.
 */
export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  username: text('username').notNull(),
  usernameKey: text('username_key').notNull(),
  displayName: text('display_name').notNull().default(''),
  passwordHash: text('password_hash').notNull(),
  mustChangePw: integer('must_change_pw', { mode: 'boolean' }).notNull().default(false),
  isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
  isBuiltin: integer('is_builtin', { mode: 'boolean' }).notNull().default(false),
  source: text('source', { enum: ['local', 'ldap', 'oidc'] }).notNull().default('local'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [uniqueIndex('users_username_key').on(t.usernameKey)])

/** Roles; name_key is the lower-cased name for case-insensitive uniqueness. */
export const roles = sqliteTable('roles', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  nameKey: text('name_key').notNull(),
  description: text('description').notNull().default(''),
  isBuiltin: integer('is_builtin', { mode: 'boolean' }).notNull().default(false),
  createdAt: integer('created_at').notNull(),
}, (t) => [uniqueIndex('roles_name_key').on(t.nameKey)])

/** One (verb, resource_glob) grant of a role; target_glob is salt's glob on minion ids an execute grant is scoped to. */
export const rolePermissions = sqliteTable('role_permissions', {
  id: text('id').primaryKey(),
  roleId: text('role_id').notNull().references(() => roles.id, { onDelete: 'cascade' }),
  verb: text('verb').notNull(),
  resourceGlob: text('resource_glob').notNull(),
  targetGlob: text('target_glob').notNull().default('*'),
}, (t) => [uniqueIndex('role_permissions_grant').on(t.roleId, t.verb, t.resourceGlob, t.targetGlob)])

/** Which roles a user holds. */
export const userRoles = sqliteTable('user_roles', {
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  roleId: text('role_id').notNull().references(() => roles.id, { onDelete: 'cascade' }),
}, (t) => [primaryKey({ columns: [t.userId, t.roleId] }), index('user_roles_role').on(t.roleId)])

/** Browser sessions and API tokens; only the SHA-256 of the secret is stored. */
export const sessions = sqliteTable('sessions', {
  id: text('id').primaryKey(),
  tokenHash: text('token_hash').notNull(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: ['session', 'api_token'] }).notNull(),
  name: text('name'),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at'),
}, (t) => [uniqueIndex('sessions_token_hash').on(t.tokenHash), index('sessions_user').on(t.userId)])

/** Bumped by triggers on every write that can change who is authenticated as what (see migration 0003). */
export const authVersion = sqliteTable('auth_version', {
  id: integer('id').primaryKey(),
  v: integer('v').notNull(),
})

/**
 * Failed logins of the last 15 minutes, one row per username (`kind` user) and one per client address (`kind` client)
 * per attempt: the login throttle, shared by every instance on the database (contract §15).
 */
export const loginFailures = sqliteTable('login_failures', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  kind: text('kind', { enum: ['user', 'client'] }).notNull(),
  key: text('key').notNull(),
  at: integer('at').notNull(),
}, (t) => [index('login_failures_key').on(t.kind, t.key, t.at), index('login_failures_at').on(t.at)])

/** One identity provider's settings (contract §14): JSON of its fields, secrets encrypted as `*_enc`. */
export const identityProviders = sqliteTable('identity_providers', {
  provider: text('provider').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/** A directory group whose members get a role; `group_key` is the group as compared (lower-cased for LDAP, whose names ignore case). */
export const identityMappings = sqliteTable('identity_mappings', {
  id: text('id').primaryKey(),
  provider: text('provider').notNull(),
  group: text('group_name').notNull(),
  groupKey: text('group_key').notNull(),
  roleId: text('role_id').notNull().references(() => roles.id, { onDelete: 'cascade' }),
  createdAt: integer('created_at').notNull(),
}, (t) => [uniqueIndex('identity_mappings_unique').on(t.provider, t.groupKey, t.roleId), index('identity_mappings_role').on(t.roleId)])
