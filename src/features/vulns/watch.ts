/**
 * Where package facts land for vulnerabilities: the inventory writer hands each flush's set changes here (inside its
 * transaction), and the grains poller the minions whose grains it stored, so findings follow the fleet as it changes.
 */
import type { AppDeps } from '../../deps'
import { minionEcosystem } from './ecosystem'
import { applyMinionChange, bumpGeneration, changeIo, matchIndex, matchKeys, recountAll, VulnSet, type MatchIndex } from './findings'
import { decodeKeyIds, ensureHolders } from '../inventory/holders'
import type { Queryable } from '../../db/engine'
import type { ChangeIo, MinionSet } from './findings-io'
import { anyAffected, ecosystemGrains, insertCountedMinion, type EcosystemGrains, uncountedSets } from './findings-store'
import { twin } from '../../db/engine'
import { sqliteDropKeys, sqliteSetsOf } from './findings-sqlite'
import { postgresDropKeys, postgresSetsOf } from './findings-postgres'

/** One minion whose package set was stored: its number (set rowid), and the key ids before (null: new) and after. */
export interface SetChange {
  num: number
  minionId: string
  before: Uint32Array | null
  after: Uint32Array
}

/** The ecosystem of a minion from its stored grains. */
const ecosystemOf = (r: EcosystemGrains | undefined): string | null => (r ? minionEcosystem(r.os, r.osrelease, r.major) : null)

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
  const io = await changeIo(tx, flush.changes)
  applyChanges(io, index, flush.changes)
  await io.finish()
  // Gone keys are forgotten after the diffs above, which still needed their matches for the sets that held them.
  if (flush.pruned.length && index.size) {
    const gone = await twin(tx, { sqlite: async () => sqliteDropKeys(tx, flush.pruned), postgres: () => postgresDropKeys(tx, flush.pruned) })()
    if (gone > 0) changed = true
    for (const id of flush.pruned) index.dropKey(id)
  }
  if (changed) await bumpGeneration(tx, index)
}

/** Counts each change's minion anew (a synchronous loop: on SQLite every read and write runs at once). */
function applyChanges(io: ChangeIo, index: MatchIndex, changes: SetChange[]) {
  const scratch = { a: new VulnSet(), b: new VulnSet() }
  for (const c of changes) {
    const old = io.stored(c.num)
    applyMinionChange(io, index, scratch, {
      num: c.num, minionId: c.minionId, oldEco: old?.e ?? null, newEco: ecosystemOf(io.grains(c.minionId)), before: old ? c.before : null, after: c.after,
    })
  }
}

/**
 * Re-counts the minions whose ecosystem moved with the grains just stored (an upgrade, or grains arriving after
 * packages), inside the caller's transaction `tx` (the one that stored the grains).
 */
export async function watchGrains(_deps: AppDeps, tx: Queryable, ids: string[]) {
  const index = await matchIndex(tx)
  // Once each: a minion's second pass would diff against what PostgreSQL's buffered writes have not stored yet.
  const minionIds = [...new Set(ids)]
  let moved = false
  // A page of minions at a time: their sets (a few KB each) are read together, not the whole poll's at once.
  for (let i = 0; i < minionIds.length; i += GRAINS_PAGE) {
    const page = minionIds.slice(i, i + GRAINS_PAGE)
    const sets = await twin(tx, { sqlite: async () => sqliteSetsOf(tx, page), postgres: () => postgresSetsOf(tx, page) })()
    const io = await changeIo(tx, sets)
    if (applyGrains(io, index, sets)) moved = true
    await io.finish()
  }
  // The counts moved outside a flush: a recount tallied before this (a CLI import beside the service) must not land.
  if (moved) await bumpGeneration(tx, index)
}

/** Minions per page of watchGrains. */
const GRAINS_PAGE = 1000

/** Counts anew the minions of `sets` whose ecosystem moved; whether any did. */
function applyGrains(io: ChangeIo, index: MatchIndex, sets: MinionSet[]): boolean {
  const scratch = { a: new VulnSet(), b: new VulnSet() }
  let moved = false
  for (const s of sets) {
    const old = io.stored(s.num)
    const eco = ecosystemOf(io.grains(s.minionId))
    if (old && old.e === eco) continue
    const ids = decodeKeyIds(s.keys)
    moved = true
    applyMinionChange(io, index, scratch, { num: s.num, minionId: s.minionId, oldEco: old?.e ?? null, newEco: eco, before: old ? ids : null, after: ids })
  }
  return moved
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
    for (const m of missing) await insertCountedMinion(tx, m.num, m.minion_id, ecosystemOf(await grains.get<EcosystemGrains>(m.minion_id)))
    if (await anyAffected(tx)) await recountAll(tx)
  })
  deps.log.info('vulnerability tables prepared', { holders_built: built, minions: missing.length })
}
