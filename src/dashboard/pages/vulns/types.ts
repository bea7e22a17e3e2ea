/** The vulnerability API's shapes (contract §12) as the dashboard reads them. */

/** One record in the fleet list. */
export interface VulnRow {
  id: string
  aliases: string[]
  summary: string
  severity: string
  packages: string[]
  minion_count: number
  fixed_versions: string[]
}

/** One record with its affected entries and the minions it affects. */
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
export interface Feed {
  ecosystem: string
  records: number
  imported_at: string
  source: string
}

/** Severities, worst first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none', 'unknown'] as const

/** The orders of the fleet list (the API's `sort`), worst first by default. */
export const VULN_SORTS = ['severity', 'minions', 'id'] as const
/** How the sort choice reads. */
export const SORT_LABEL: Record<(typeof VULN_SORTS)[number], string> = { severity: 'Severity, then minions', minions: 'Minions affected', id: 'Record id' }
