/**
 * What the rule evaluators read of other features' tables (minions, vuln_minions): reads only; those features write
 * them. Kept here until the minions and vulns stores answer these questions themselves.
 */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { minions, vulnMinions } from '../../db/schema'

/** The newest real run time of a minion, or null. */
export async function lastRunAt(q: Queryable, minionId: string): Promise<number | null> {
  const r = await q.row<Pick<Row<typeof minions>, 'last_run_completed_at'>>(sql`SELECT ${minions.lastRunCompletedAt} FROM ${minions} WHERE ${minions.id} = ${minionId}`)
  return r?.last_run_completed_at ?? null
}

/** The accepted minions offline now, each with the time it went offline (or was last seen, or changed). */
export const offlineMinions = (q: Queryable) =>
  q.rows<{ id: string; since: number }>(sql`SELECT ${minions.id}, coalesce(${minions.offlineSince}, ${minions.lastSeen}, ${minions.updatedAt}) AS since
    FROM ${minions} WHERE ${minions.keyState} = 'accepted' AND ${minions.online} = 0`)

/** The minions whose worst finding ranks at least `rank`. */
export const minionsWorstAtLeast = (q: Queryable, rank: number) =>
  q.rows<Pick<Row<typeof vulnMinions>, 'minion_id' | 'worst'>>(sql`SELECT ${vulnMinions.minionId}, ${vulnMinions.worst} FROM ${vulnMinions} WHERE ${vulnMinions.worst} >= ${rank}`)
