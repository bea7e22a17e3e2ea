/** The vulnerability API's shapes (contract §12) as the dashboard reads them: from the answer schemas, except the record detail, whose route has none. */
import type { Static } from '@sinclair/typebox'
import type { FeedOut, FindingOut, ImportOut, MinionVulnsOut, VulnRecordOut } from '../../../features/vulns/schema'

/** One record in the fleet list. */
export type VulnRow = Static<typeof VulnRecordOut>

/** One record with its affected entries and the minions it affects. */
// GET /api/vulns/{id} declares no answer schema (its record detail is free-form OSV), so this one stays spelled here.
export interface VulnDetail extends VulnRow {
  details: string
  score: number | null
  published: string | null
  modified: string | null
  affected: { ecosystem: string; package: string; ranges: Record<string, string>[][]; versions: string[] }[]
  minion_total: number
  minions: { minion_id: string; package: string; installed: string; fixed: string | null }[]
}

/** One imported feed. */
export type Feed = Static<typeof FeedOut>
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
