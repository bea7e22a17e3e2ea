/** The audit log's filters as kept in the page address (`#/audit?user=&action=&since=&offset=`). */

/** The filters of one audit view. */
export interface AuditFilters {
  user: string
  action: string
  /** Minutes back from now; undefined = any time. */
  since: number | undefined
  offset: number
}

/** Largest `since_minutes` the API takes (one year). */
export const MAX_SINCE_MINUTES = 525_600

const wholeIn = (raw: string | null, min: number, max: number) => {
  if (raw === null || !/^\d+$/.test(raw)) return undefined
  const n = Number(raw)
  return n >= min && n <= max ? n : undefined
}

/** Reads the filters from the address; values the API would refuse are dropped, not sent. */
export function auditFilters(q: URLSearchParams): AuditFilters {
  return {
    user: (q.get('user') ?? '').slice(0, 64),
    action: (q.get('action') ?? '').slice(0, 64),
    since: wholeIn(q.get('since'), 1, MAX_SINCE_MINUTES),
    offset: wholeIn(q.get('offset'), 0, Number.MAX_SAFE_INTEGER) ?? 0,
  }
}

/** The GET /api/audit query parameters for the filters and a page size. */
export function auditParams(f: AuditFilters, limit: number) {
  return { user: f.user.trim() || undefined, action: f.action.trim() || undefined, since_minutes: f.since, limit, offset: f.offset }
}
