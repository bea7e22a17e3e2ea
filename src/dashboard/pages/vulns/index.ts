/** The vulnerability pages: the fleet's records, one record, the feeds. */
import type { PageDef } from '../../lib/pages'
import { VulnsPage } from './list'
import { VulnRecordPage } from './record'
import { FeedsPage } from './feeds'

const view: [string, string] = ['view', 'vuln:*']

/** Vulnerability pages in navigation order; the record page follows its list. */
export const vulnPages: PageDef[] = [
  { pattern: '/vulns', title: 'Vulnerabilities', component: VulnsPage, nav: { label: 'Vulnerabilities', section: 'Vulnerabilities' }, needs: view },
  { pattern: '/vulns/feeds', title: 'Vulnerability feeds', component: FeedsPage, nav: { label: 'Feeds', section: 'Vulnerabilities' }, needs: view },
  { pattern: '/vulns/:id', title: 'Vulnerability', component: VulnRecordPage, needs: view },
]
