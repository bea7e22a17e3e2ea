/**
 * Where package facts land for vulnerabilities: the inventory writer hands each flush's set changes here (inside its
 * transaction), and the grains poller the minions whose grains it stored, so findings follow the fleet as it changes.
 */
import type { AppDeps } from '../../deps'
import { minionEcosystem } from './ecosystem'
import { applyMinionChange, bumpGeneration, matchIndex, matchKeys, recountAll, VulnSet } from './findings'
import { decodeKeyIds, ensureHolders } from '../inventory/holders'
import type { Queryable } from '../../db/engine'
import type { Prepared } from '../../db/prepared'
import { anyAffected, dropKeyMatches, ecosystemGrains, insertCountedMinion, minionChangeWrites, type EcosystemGrains, setOf, storedEcosystem, uncountedSets } from './findings-store'

/** One minion whose package set was stored: its number (set rowid), and the key ids before (null: new) and after. */
export interface SetChange {
  num: number
  minionId: string
  before: Uint32Array | null
  after: Uint32Array
}

/** The ecosystem of a minion from its stored grains. */
async function ecosystemOf(grains: Prepared, minionId: string): Promise<string | null> {
  const r = await grains.get<EcosystemGrains>(minionId)
  return r ? minionEcosystem(r.os, r.osrelease, r.major) : null
}

/** Time the last flush's re-match took, in ms (for /metrics and the benchmark). */
export const rematchTiming = { lastMs: 0, totalMs: 0, flushes: 0 }

/** Keeps findings current for one flush of the inventory writer (inside its transaction `tx`): new keys matched, minions' changes counted, gone keys forgotten. */
export async function watchPackageSets(_deps: AppDeps, tx: Queryable, flush: { changes: SetChange[]; inserted: number[]; pruned: number[] }) {
  const t0 = performance.now()
  try {
    await rematch(tx, flush)
  } finally {
    rematchTiming.lastMs = performance.now() - t0
    rematchTiming.totalMs += rematchTiming.lastMs
    rematchTiming.flushes++
  }
}

async function rematch(tx: Queryable, flush: { changes: SetChange[]; inserted: number[]; pruned: number[] }) {
  const feeds = await anyAffected(tx)
  // The index is changed in step with vuln_matches here, so a flush of a few minions never reloads every match.
  const index = await matchIndex(tx)
  let changed = feeds && flush.inserted.length > 0 && (await matchKeys(tx, flush.inserted, null, index))
  const scratch = { a: new VulnSet(), b: new VulnSet() }
  const w = minionChangeWrites(tx)
  const stored = storedEcosystem(tx)
  const grains = ecosystemGrains(tx)
  for (const c of flush.changes) {
    const old = await stored.get<{ e: string | null }>(c.num)
    await applyMinionChange(w, index, scratch, {
      num: c.num, minionId: c.minionId, oldEco: old?.e ?? null, newEco: await ecosystemOf(grains, c.minionId), before: old ? c.before : null, after: c.after,
    })
  }
  // Gone keys are forgotten after the diffs above, which still needed their matches for the sets that held them.
  if (flush.pruned.length && index.size) {
    const drop = dropKeyMatches(tx)
    for (const id of flush.pruned) if ((await drop.run(id)) > 0) changed = true, index.dropKey(id)
  }
  if (changed) await bumpGeneration(tx, index)
}

/**
 * Re-counts the minions whose ecosystem moved with the grains just stored (an upgrade, or grains arriving after
 * packages), inside the caller's transaction `tx` (the one that stored the grains).
 */
export async function watchGrains(_deps: AppDeps, tx: Queryable, minionIds: string[]) {
  const index = await matchIndex(tx)
  const scratch = { a: new VulnSet(), b: new VulnSet() }
  const w = minionChangeWrites(tx)
  const stored = storedEcosystem(tx)
  const grains = ecosystemGrains(tx)
  let moved = false
  for (const id of minionIds) {
    const s = await setOf(tx, id)
    if (!s) continue
    const old = await stored.get<{ e: string | null }>(s.num)
    const eco = await ecosystemOf(grains, id)
    if (old && old.e === eco) continue
    const ids = decodeKeyIds(s.keys)
    moved = true
    await applyMinionChange(w, index, scratch, { num: s.num, minionId: id, oldEco: old?.e ?? null, newEco: eco, before: old ? ids : null, after: ids })
  }
  // The counts moved outside a flush: a recount tallied before this (a CLI import beside the service) must not land.
  if (moved) await bumpGeneration(tx, index)
}

/**
 * Brings an install whose package sets predate the vulnerability tables up to date at start: the holder index built
 * from the sets, every minion with a set given its ecosystem, and the counts made if feeds are already imported.
 */
export async function ensureFindings(deps: AppDeps) {
  const db = deps.db
  const built = await ensureHolders(db)
  const missing = await uncountedSets(db)
  if (!missing.length) return
  await db.tx(async (tx) => {
    const grains = ecosystemGrains(tx)
    for (const m of missing) await insertCountedMinion(tx, m.num, m.minion_id, await ecosystemOf(grains, m.minion_id))
    if (await anyAffected(tx)) await recountAll(tx)
  })
  deps.log.info('vulnerability tables prepared', { holders_built: built, minions: missing.length })
}
