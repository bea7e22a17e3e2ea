/** Batched runs (contract §16): the SQL of `batches` and `batch_slices`. How a batch advances is in service.ts. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { batches, batchSlices } from '../../db/schema'

/** A batch as stored. */
export type BatchRow = Row<typeof batches>
/** A slice of a batch as stored. */
export type SliceRow = Row<typeof batchSlices>

/** Stores a new batch, running. */
export async function insertBatch(q: Queryable, b: Omit<BatchRow, 'state' | 'error' | 'updated_at'>) {
  await q.exec(sql`INSERT INTO ${batches} (id, initiator, fun, arg, kwarg, target, tgt_type, size, wait_seconds, stop_on_failure, state, created_at, updated_at)
    VALUES (${b.id}, ${b.initiator}, ${b.fun}, ${b.arg}, ${b.kwarg}, ${b.target}, ${b.tgt_type}, ${b.size}, ${b.wait_seconds}, ${b.stop_on_failure}, 'running', ${b.created_at}, ${b.created_at})`)
}

/** Stores one slice of a batch, not yet published. */
export async function insertSlice(q: Queryable, batchId: string, idx: number, minions: string) {
  await q.exec(sql`INSERT INTO ${batchSlices} (batch_id, idx, minions) VALUES (${batchId}, ${idx}, ${minions})`)
}

/** One batch, or undefined. */
export const batchRow = (q: Queryable, id: string) => q.row<BatchRow>(sql`SELECT * FROM ${batches} WHERE ${batches.id} = ${id}`)

/** A batch's slices in order. */
export const sliceRows = (q: Queryable, id: string) =>
  q.rows<SliceRow>(sql`SELECT * FROM ${batchSlices} WHERE ${batchSlices.batchId} = ${id} ORDER BY ${batchSlices.idx}`)

/** The running batches' ids, oldest first. */
export async function runningBatchIds(q: Queryable): Promise<string[]> {
  const rows = await q.rows<Pick<BatchRow, 'id'>>(sql`SELECT ${batches.id} FROM ${batches} WHERE ${batches.state} = 'running' ORDER BY ${batches.createdAt}`)
  return rows.map((r) => r.id)
}

/** Sets a batch's state (and why it failed). */
export async function setBatchState(q: Queryable, id: string, state: string, error: string | null, now: number) {
  await q.exec(sql`UPDATE ${batches} SET state = ${state}, error = ${error}, updated_at = ${now} WHERE ${batches.id} = ${id}`)
}

/** Notes that a batch moved on. */
export async function touchBatch(q: Queryable, id: string, now: number) {
  await q.exec(sql`UPDATE ${batches} SET updated_at = ${now} WHERE ${batches.id} = ${id}`)
}

/** Marks a slice finished. */
export async function finishSlice(q: Queryable, id: string, idx: number, now: number) {
  await q.exec(sql`UPDATE ${batchSlices} SET finished_at = ${now} WHERE ${batchSlices.batchId} = ${id} AND ${batchSlices.idx} = ${idx}`)
}

/** Claims a slice for publishing under `jid`; false when it already has a job (another step claimed it). */
export async function claimSlice(q: Queryable, id: string, idx: number, jid: string, now: number): Promise<boolean> {
  const n = await q.exec(sql`UPDATE ${batchSlices} SET jid = ${jid}, started_at = ${now}
    WHERE ${batchSlices.batchId} = ${id} AND ${batchSlices.idx} = ${idx} AND ${batchSlices.jid} IS NULL`)
  return n === 1
}

/** Gives a claimed slice up (salt did not take it). */
export async function releaseSlice(q: Queryable, id: string, idx: number) {
  await q.exec(sql`UPDATE ${batchSlices} SET jid = NULL, started_at = NULL WHERE ${batchSlices.batchId} = ${id} AND ${batchSlices.idx} = ${idx}`)
}
