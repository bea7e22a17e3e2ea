/** The answer schemas of the vulnerability routes (contract §12): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'

/** One record in the fleet list. */
export const VulnRecordOut = T.Object({
  id: T.String(), aliases: T.Array(T.String()), summary: T.String(), severity: T.String(), packages: T.Array(T.String()),
  minion_count: T.Integer(), fixed_versions: T.Array(T.String()),
})
/** GET /api/vulns. */
export const VulnListOut = T.Object({ total: T.Integer(), vulns: T.Array(VulnRecordOut) })
/** One imported feed. */
export const FeedOut = T.Object({ ecosystem: T.String(), records: T.Integer(), imported_at: T.String({ format: 'date-time' }), source: T.String() })
/** GET /api/vulns/feeds. */
export const FeedListOut = T.Object({ feeds: T.Array(FeedOut) })
/** POST /api/vulns/import: what the import stored, skipped and withdrew. */
export const ImportOut = T.Object({ records: T.Integer(), skipped: T.Integer(), withdrawn: T.Integer(), feeds: T.Array(FeedOut) })
/** One record affecting a minion, with the packages it matched. */
export const FindingOut = T.Object({
  id: T.String(), aliases: T.Array(T.String()), summary: T.String(), severity: T.String(),
  packages: T.Array(T.Object({ package: T.String(), installed: T.String(), fixed: T.Union([T.String(), T.Null()]) })),
})
/** GET /api/minions/{id}/vulns. */
export const MinionVulnsOut = T.Object({
  minion_id: T.String(), ecosystem: T.Union([T.String(), T.Null()]), grains_collected: T.Boolean(), packages_collected: T.Boolean(), total: T.Integer(), vulns: T.Array(FindingOut),
})
/** One event of an affected range (OSV's ECOSYSTEM ranges): exactly one of its fields is set. */
export const RangeEventOut = T.Object({ introduced: T.Optional(T.String()), fixed: T.Optional(T.String()), last_affected: T.Optional(T.String()) }, { additionalProperties: false })
/** One affected entry of a record: an ecosystem's package, its ranges (one event list each) and listed versions. */
export const AffectedOut = T.Object({ ecosystem: T.String(), package: T.String(), ranges: T.Array(T.Array(RangeEventOut)), versions: T.Array(T.String()) })
/** One minion a record affects, through one package it holds. */
export const AffectedMinionOut = T.Object({ minion_id: T.String(), package: T.String(), installed: T.String(), fixed: T.Union([T.String(), T.Null()]) })
/** GET /api/vulns/{id}: the record with its OSV text and times, its affected entries and a page of the minions it affects. */
export const VulnDetailOut = T.Object({
  ...VulnRecordOut.properties, details: T.String(), score: T.Union([T.Number(), T.Null()]), published: T.Union([T.String(), T.Null()]), modified: T.Union([T.String(), T.Null()]),
  affected: T.Array(AffectedOut), minion_total: T.Integer(), minions: T.Array(AffectedMinionOut),
})
