/**
 * Batched runs (contract §16): the checked minion list published in slices, as salt's batch mode does. A batch is a
 * state machine in the database, advanced by `advanceBatches` (the runtime calls it every second, and once when a batch
 * starts): a slice is finished when all its minions returned (job returns stored from the event bus or the job cache)
 * or SLICE_TIMEOUT_MS passed; the next one is published `batch_wait` seconds later. All of it is read from the tables,
 * so a restart resumes where the batch stood: a slice published before the stop is waited for again, never republished.
 */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { NotFound } from '../../lib/errors'
import { newId } from '../../lib/ids'
import { newJid } from '../../lib/salt-time'
import { iso } from '../../lib/clock'
import { checkedMinions, publishChecked, type RunRequest } from '../salt-actions/run'
import { returnOutcomes } from '../jobs/store'
import {
  batchRow, claimSlice, finishSlice, insertBatch, insertSlice, releaseSlice, runningBatchIds, setBatchState, sliceRows, touchBatch, type SliceRow,
} from './store'

/** How long a slice waits for its minions' returns before it counts the missing ones as failed and goes on. */
export const SLICE_TIMEOUT_MS = 300_000

/** The batch options of POST /api/run. */
export interface BatchOptions {
  batch: number | string
  batch_wait: number
  batch_stop_on_failure: boolean
}

/** The slice size for `batch` (a count, or "N%" of the minions, rounded up, at least 1). */
export function sliceSize(batch: number | string, total: number): number {
  if (typeof batch === 'number') return batch
  const pct = Number(batch.slice(0, -1))
  return Math.max(1, Math.ceil((total * pct) / 100))
}

/** Checks the whole target as a run would (contract §14), stores the batch and its slices, publishes the first slice. */
export async function startBatch(deps: AppDeps, client: SaltClient, user: { userId: string; username: string }, req: RunRequest, opts: BatchOptions) {
  const { minions, skipped } = await checkedMinions(deps, client, user.userId, req)
  const size = sliceSize(opts.batch, minions.length)
  const id = newId()
  const now = deps.clock.now()
  await deps.db.tx(async (tx) => {
    await insertBatch(tx, {
      id, initiator: user.username, fun: req.fun, arg: JSON.stringify(req.arg), kwarg: JSON.stringify(req.kwarg), target: Array.isArray(req.tgt) ? req.tgt.join(',') : req.tgt,
      tgt_type: req.tgt_type, size, wait_seconds: opts.batch_wait, stop_on_failure: opts.batch_stop_on_failure ? 1 : 0, created_at: now,
    })
    for (let i = 0; i * size < minions.length; i++) await insertSlice(tx, id, i, JSON.stringify(minions.slice(i * size, (i + 1) * size)))
  })
  await advanceBatch(deps, client, id)
  const first = (await sliceRows(deps.db, id))[0]!
  return { jid: first.jid ?? '', minions, batch_id: id, skipped_sources: skipped }
}

/** A slice's stored returns: how many minions returned, and which failed (success false or a non-zero retcode). */
async function progress(deps: AppDeps, s: SliceRow) {
  const minions = JSON.parse(s.minions) as string[]
  if (!s.jid) return { minions, returned: 0, failed: 0 }
  const rows = await returnOutcomes(deps.db, s.jid)
  const mine = rows.filter((r) => minions.includes(r.minion_id))
  const bad = mine.filter((r) => r.success === 0 || (r.retcode !== null && r.retcode !== 0)).length
  // Once a slice finished by its timeout, the minions that never returned count as failed.
  const missing = s.finished_at !== null ? minions.length - mine.length : 0
  return { minions, returned: mine.length, failed: bad + missing }
}

const setState = (deps: AppDeps, id: string, state: string, error: string | null = null) => setBatchState(deps.db, id, state, error, deps.clock.now())

/** One step of one running batch: publish the first slice, finish the current one, stop, end, or publish the next. */
async function advanceBatch(deps: AppDeps, client: SaltClient, id: string) {
  const b = await batchRow(deps.db, id)
  if (!b || b.state !== 'running') return
  const slices = await sliceRows(deps.db, id)
  const now = deps.clock.now()
  const published = slices.filter((s) => s.jid !== null)
  let cur = published[published.length - 1]
  if (cur && cur.finished_at === null) {
    const p = await progress(deps, cur)
    if (p.returned < p.minions.length && now < cur.started_at! + SLICE_TIMEOUT_MS) return
    await finishSlice(deps.db, id, cur.idx, now)
    cur = { ...cur, finished_at: now }
  }
  if (cur && b.stop_on_failure && (await progress(deps, cur)).failed > 0) return setState(deps, id, 'stopped')
  const next = slices[cur ? cur.idx + 1 : 0]
  if (!next) return setState(deps, id, 'done')
  if (cur && now < cur.finished_at! + b.wait_seconds * 1000) return
  // The slice is claimed with its jid before salt is asked, so two steps at once (the start and the tick) never publish
  // it twice; a stop between the claim and the publish leaves a slice without returns, which its timeout ends.
  const jid = newJid(now)
  if (!(await claimSlice(deps.db, id, next.idx, jid, now))) return
  try {
    await publishChecked(deps, client, b.initiator, JSON.parse(next.minions), { fun: b.fun, arg: JSON.parse(b.arg), kwarg: JSON.parse(b.kwarg) }, jid)
    await touchBatch(deps.db, id, deps.clock.now())
  } catch (e) {
    // salt refused or did not answer: the batch ends failed, saying why; this slice was not published, the earlier stay.
    await releaseSlice(deps.db, id, next.idx)
    await setState(deps, id, 'failed', e instanceof Error ? e.message : String(e))
  }
}

/** Advances every running batch one step (the runtime's tick; after a restart it resumes each where it stood). */
export async function advanceBatches(deps: AppDeps, client: SaltClient) {
  for (const id of await runningBatchIds(deps.db)) await advanceBatch(deps, client, id)
}

/** A batch as GET /api/batches/{id} answers it; NotFound when there is none. */
export async function getBatch(deps: AppDeps, id: string) {
  const b = await batchRow(deps.db, id)
  if (!b) throw new NotFound('Batch')
  return {
    id: b.id, state: b.state as 'running' | 'done' | 'stopped' | 'failed', error: b.error, initiator: b.initiator, fun: b.fun,
    target: b.target, tgt_type: b.tgt_type, size: b.size, batch_wait: b.wait_seconds, batch_stop_on_failure: !!b.stop_on_failure,
    created_at: iso(b.created_at), updated_at: iso(b.updated_at),
    slices: await Promise.all((await sliceRows(deps.db, id)).map(async (s) => {
      const p = await progress(deps, s)
      return { jid: s.jid, minions: p.minions, returned: p.returned, failed: p.failed, started_at: s.started_at === null ? null : iso(s.started_at), finished_at: s.finished_at === null ? null : iso(s.finished_at) }
    })),
  }
}
