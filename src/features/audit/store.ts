/** SQL of the audit log: appending entries and reading them newest first. */
import type { SQL } from 'drizzle-orm'
import { sql, limitOf } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { auditLog } from '../../db/schema'

/** A stored audit entry. */
export type AuditRow = Row<typeof auditLog>

/** Appends one entry. */
export async function insertEntry(q: Queryable, e: Omit<AuditRow, 'id'>) {
  await q.exec(sql`INSERT INTO ${auditLog} (ts, username, action, target, ok, detail, client)
    VALUES (${e.ts}, ${e.username}, ${e.action}, ${e.target}, ${e.ok}, ${e.detail}, ${e.client})`)
}

/** What the audit list filters on; absent filters match everything. */
export interface AuditFilter {
  username?: string
  action?: string
  since?: number
}

const whereOf = (f: AuditFilter): SQL => {
  const parts: SQL[] = []
  if (f.username) parts.push(sql`${auditLog.username} = ${f.username}`)
  if (f.action) parts.push(sql`${auditLog.action} = ${f.action}`)
  if (f.since !== undefined) parts.push(sql`${auditLog.ts} >= ${f.since}`)
  return parts.length ? sql` WHERE ${sql.join(parts, sql` AND `)}` : sql.empty()
}

/** How many entries match. */
export async function countEntries(q: Queryable, f: AuditFilter): Promise<number> {
  return (await q.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${auditLog}${whereOf(f)}`))?.n ?? 0
}

/** One page of matching entries, newest first. */
export const entries = (q: Queryable, f: AuditFilter, limit: number, offset: number) =>
  q.rows<AuditRow>(sql`SELECT * FROM ${auditLog}${whereOf(f)} ORDER BY ${auditLog.id} DESC LIMIT ${limitOf(limit)} OFFSET ${offset}`)
