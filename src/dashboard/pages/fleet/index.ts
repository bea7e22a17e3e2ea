/** The fleet pages: overview, minions, activity, inventory, jobs, keys. */
import type { PageDef } from '../../lib/pages'
import { Overview } from './overview'
import { Minions } from './minions'
import { Minion } from './minion'
import { RunPage } from './run'
import { Activity } from './activity'
import { Inventory } from './inventory'
import { PackageVersions } from './package'
import { Jobs } from './jobs'
import { JobPage } from './job'
import { TemplatesPage } from './templates'
import { SchedulesPage } from './schedules'
import { BatchPage } from './batch'
import { Keys } from './keys'
import { SaltHealthPage } from './salt-health'

/** Fleet pages in navigation order; detail pages follow their list. */
export const fleetPages: PageDef[] = [
  { pattern: '/', title: 'Overview', component: Overview, nav: { label: 'Overview', section: 'Fleet' } },
  { pattern: '/minions', title: 'Minions', component: Minions, nav: { label: 'Minions', section: 'Fleet' }, needs: ['view', 'minion:*'] },
  { pattern: '/minions/:id', title: 'Minion', component: Minion, needs: ['view', 'minion:*'] },
  { pattern: '/minions/:id/runs/:jid', title: 'Run', component: RunPage, needs: ['view', 'minion:*'] },
  { pattern: '/activity', title: 'Activity', component: Activity, nav: { label: 'Activity', section: 'Fleet' } },
  { pattern: '/inventory', title: 'Packages', component: Inventory, nav: { label: 'Packages', section: 'Fleet' }, needs: ['view', 'inventory:*'] },
  // The nav says Packages: `#/packages` opens the same page (issue 23 item 5), `#/inventory` stays for old links.
  { pattern: '/packages', title: 'Packages', component: Inventory, needs: ['view', 'inventory:*'] },
  { pattern: '/inventory/:name', title: 'Package', component: PackageVersions, needs: ['view', 'inventory:*'] },
  { pattern: '/jobs', title: 'Jobs', component: Jobs, nav: { label: 'Jobs', section: 'Fleet' }, needs: ['view', 'job:*'] },
  { pattern: '/jobs/:jid', title: 'Job', component: JobPage, needs: ['view', 'job:*'] },
  // Beside Jobs: saved commands and their schedules (contract §16); every user sees its own and the shared ones.
  { pattern: '/templates', title: 'Templates', component: TemplatesPage, nav: { label: 'Templates', section: 'Fleet' } },
  { pattern: '/schedules', title: 'Schedules', component: SchedulesPage, nav: { label: 'Schedules', section: 'Fleet' } },
  { pattern: '/batches/:id', title: 'Batch', component: BatchPage, needs: ['view', 'job:*'] },
  { pattern: '/keys', title: 'Keys', component: Keys, nav: { label: 'Keys', section: 'Fleet' }, needs: ['view', 'key:*'] },
  { pattern: '/salt-health', title: 'Salt health', component: SaltHealthPage, nav: { label: 'Salt health', section: 'Fleet' }, needs: ['view', 'minion:*'] },
]
