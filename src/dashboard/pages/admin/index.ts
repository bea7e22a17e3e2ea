/** The admin pages: settings, salt sources, pollers, identity, users, roles, API tokens, audit log. */
import type { PageDef } from '../../lib/pages'
import { AuditPage } from './audit'
import { IdentityPage } from './identity'
import { PollersPage } from './pollers'
import { RolePage } from './role'
import { RolesPage } from './roles'
import { SaltSourcesPage } from './salt-sources'
import { SettingsPage } from './settings'
import { TokensPage } from './tokens'
import { UserPage } from './user'
import { UsersPage } from './users'

/** Admin pages in navigation order. */
export const adminPages: PageDef[] = [
  { pattern: '/settings', title: 'Settings', component: SettingsPage, nav: { label: 'Settings', section: 'Admin' }, needs: ['edit', 'settings:*'] },
  { pattern: '/salt-sources', title: 'Salt sources', component: SaltSourcesPage, nav: { label: 'Salt sources', section: 'Admin' }, needs: ['edit', 'settings:*'] },
  { pattern: '/pollers', title: 'Pollers', component: PollersPage, nav: { label: 'Pollers', section: 'Admin' }, needs: ['edit', 'settings:*'] },
  { pattern: '/identity', title: 'Identity', component: IdentityPage, nav: { label: 'Identity', section: 'Admin' }, needs: ['manage', 'setting:*'] },
  { pattern: '/users', title: 'Users', component: UsersPage, nav: { label: 'Users', section: 'Admin' }, needs: ['view', 'user:*'] },
  { pattern: '/users/:id', title: 'User', component: UserPage, needs: ['view', 'user:*'] },
  { pattern: '/roles', title: 'Roles', component: RolesPage, nav: { label: 'Roles', section: 'Admin' }, needs: ['view', 'role:*'] },
  { pattern: '/roles/:id', title: 'Role', component: RolePage, needs: ['view', 'role:*'] },
  { pattern: '/tokens', title: 'API tokens', component: TokensPage, nav: { label: 'API tokens', section: 'Admin' } },
  { pattern: '/audit', title: 'Audit log', component: AuditPage, nav: { label: 'Audit log', section: 'Admin' }, needs: ['view', 'audit:*'] },
]
