/** The admin pages: settings, pollers, users, roles, API tokens, audit log. */
import type { PageDef } from '../../lib/pages'
import { PollersPage } from './pollers'
import { SettingsPage } from './settings'

/** Admin pages in navigation order. */
export const adminPages: PageDef[] = [
  { pattern: '/settings', title: 'Settings', component: SettingsPage, nav: { label: 'Settings', section: 'Admin' }, needs: ['edit', 'settings:*'] },
  { pattern: '/pollers', title: 'Pollers', component: PollersPage, nav: { label: 'Pollers', section: 'Admin' }, needs: ['edit', 'settings:*'] },
]
