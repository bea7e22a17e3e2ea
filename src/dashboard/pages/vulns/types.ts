/** The vulnerability API's shapes (contract §12) as the dashboard reads them: from the answer schemas. */
import type { Static } from '@sinclair/typebox'
import type { FeedListOut, FeedOut, FindingOut, ImportOut, MinionVulnsOut, VulnDetailOut, VulnListOut, VulnRecordOut } from '../../../features/vulns/schema'

/** One record in the fleet list. */
export type VulnRow = Static<typeof VulnRecordOut>

/** GET /api/vulns: a page of the fleet's records. */
export type VulnList = Static<typeof VulnListOut>

/** One record with its affected entries and the minions it affects. */
export type VulnDetail = Static<typeof VulnDetailOut>

/** One imported feed. */
export type Feed = Static<typeof FeedOut>
/** GET /api/vulns/feeds. */
export type FeedList = Static<typeof FeedListOut>
/** POST /api/vulns/import's answer. */
export type ImportResult = Static<typeof ImportOut>
/** One record affecting a minion. */
export type Finding = Static<typeof FindingOut>
/** GET /api/minions/{id}/vulns. */
export type MinionVulns = Static<typeof MinionVulnsOut>

/** Severities, worst first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none', 'unknown'] as const

/** The orders of the fleet list (the API's `sort`), worst first by default. */
export const VULN_SORTS = ['severity', 'minions', 'id'] as const
/** How the sort choice reads. */
export const SORT_LABEL: Record<(typeof VULN_SORTS)[number], string> = { severity: 'Severity, then minions', minions: 'Minions affected', id: 'Record id' }
