/** The admin pages: settings, pollers, users, roles, API tokens, audit log. */
import type { PageDef } from '../../lib/pages'

/** Admin pages in navigation order. */
export const adminPages: PageDef[] = []
