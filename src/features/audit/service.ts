/** The audit log: who did what, when and from where. */
import { and, desc, eq, gte, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { auditLog } from '../../db/schema'
import { iso } from '../../lib/clock'

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
export function audit(deps: AppDeps, e: AuditInput): void {
  deps.db.insert(auditLog).values({
    ts: deps.clock.now(),
    username: e.username,
    action: e.action,
    target: e.target ?? null,
    ok: e.ok ?? true,
    detail: e.detail ?? null,
    client: e.client ?? null,
  }).run()
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
export function listAudit(deps: AppDeps, q: AuditQuery) {
  const where: SQL[] = []
  if (q.user) where.push(eq(auditLog.username, q.user))
  if (q.action) where.push(eq(auditLog.action, q.action))
  if (q.since_minutes) where.push(gte(auditLog.ts, deps.clock.now() - q.since_minutes * 60_000))
  const cond = where.length ? and(...where) : undefined
  const total = deps.db.select({ n: sql<number>`count(*)` }).from(auditLog).where(cond).get()!.n
  const rows = deps.db.select().from(auditLog).where(cond).orderBy(desc(auditLog.id)).limit(q.limit).offset(q.offset).all()
  return {
    total,
    entries: rows.map((r) => ({ id: r.id, ts: iso(r.ts), username: r.username, action: r.action, target: r.target, ok: r.ok, detail: r.detail, client: r.client })),
  }
}
