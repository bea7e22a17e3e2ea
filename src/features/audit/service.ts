/** The audit log: who did what, when and from where. */
import type { AppDeps } from '../../deps'
import { iso } from '../../lib/clock'
import { countEntries, entries, insertEntry, type AuditFilter } from './store'

/** One audit entry to write. */
export interface AuditInput {
  username: string | null
  action: string
  target?: string | null
  ok?: boolean
  detail?: string | null
  client?: string | null
}

/** Appends one entry to the audit log. */
export async function audit(deps: AppDeps, e: AuditInput): Promise<void> {
  await insertEntry(deps.db, {
    ts: deps.clock.now(),
    username: e.username,
    action: e.action,
    target: e.target ?? null,
    ok: (e.ok ?? true) ? 1 : 0,
    detail: e.detail ?? null,
    client: e.client ?? null,
  })
}

/** Filters of the audit list. */
export interface AuditQuery {
  user?: string
  action?: string
  since_minutes?: number
  limit: number
  offset: number
}

/** Lists audit entries newest first with the total before paging. */
export async function listAudit(deps: AppDeps, q: AuditQuery) {
  const f: AuditFilter = { username: q.user, action: q.action, since: q.since_minutes ? deps.clock.now() - q.since_minutes * 60_000 : undefined }
  const total = await countEntries(deps.db, f)
  const rows = await entries(deps.db, f, q.limit, q.offset)
  return {
    total,
    entries: rows.map((r) => ({ id: r.id, ts: iso(r.ts), username: r.username, action: r.action, target: r.target, ok: r.ok === 1, detail: r.detail, client: r.client })),
  }
}
