/** The alerts pages: alerts, rules, channels, silences, deliveries. */
import type { PageDef } from '../../lib/pages'
import { AlertsPage } from './alerts'
import { ChannelsPage } from './channels'
import { DeliveriesPage } from './deliveries'
import { RulesPage } from './rules'
import { SilencesPage } from './silences'

const view: [string, string] = ['view', 'alert:*']

/** Alerts pages in navigation order. */
export const alertPages: PageDef[] = [
  { pattern: '/alerts', title: 'Alerts', component: AlertsPage, nav: { label: 'Alerts', section: 'Alerts' }, needs: view },
  { pattern: '/alerts/rules', title: 'Alert rules', component: RulesPage, nav: { label: 'Rules', section: 'Alerts' }, needs: view },
  { pattern: '/alerts/channels', title: 'Alert channels', component: ChannelsPage, nav: { label: 'Channels', section: 'Alerts' }, needs: view },
  { pattern: '/alerts/silences', title: 'Silences', component: SilencesPage, nav: { label: 'Silences', section: 'Alerts' }, needs: view },
  { pattern: '/alerts/deliveries', title: 'Deliveries', component: DeliveriesPage, nav: { label: 'Deliveries', section: 'Alerts' }, needs: view },
]
