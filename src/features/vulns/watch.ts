/**
 * Where package facts land for vulnerabilities: the inventory writer hands each flush's set changes here (inside its
 * transaction), and the grains poller the minions whose grains it stored, so findings follow the fleet as it changes.
 */
import type { AppDeps } from '../../deps'
import { minionEcosystem } from './ecosystem'
import { applyMinionChange, bumpGeneration, matchIndex, matchKeys, recountAll, VulnSet } from './findings'
import { decodeKeyIds, ensureHolders } from '../inventory/holders'

/** One minion whose package set was stored: its number (set rowid), and the key ids before (null: new) and after. */
export interface SetChange {
  num: number
  minionId: string
  before: Uint32Array | null
  after: Uint32Array
}

type EcoRow = { os: string | null; osrelease: string | null; major: unknown }

/** The ecosystem of a minion from its stored grains. */
function ecosystemOf(deps: AppDeps, minionId: string): string | null {
  const r = deps.db.$client.query<EcoRow, [string]>(
    "SELECT os, osrelease, json_extract(grains, '$.osmajorrelease') AS major FROM minions WHERE id = ?1",
  ).get(minionId)
  return r ? minionEcosystem(r.os, r.osrelease, r.major) : null
}

const storedEcosystem = (deps: AppDeps, num: number) =>
  deps.db.$client.query<{ e: string | null }, [number]>('SELECT ecosystem AS e FROM vuln_minions WHERE minion_num = ?1').get(num)

/** Time the last flush's re-match took, in ms (for /metrics and the benchmark). */
export const rematchTiming = { lastMs: 0, totalMs: 0, flushes: 0 }

/** Keeps findings current for one flush of the inventory writer: new keys matched, minions' changes counted, gone keys forgotten. */
export function watchPackageSets(deps: AppDeps, flush: { changes: SetChange[]; inserted: number[]; pruned: number[] }) {
  const t0 = performance.now()
  try {
    rematch(deps, flush)
  } finally {
    rematchTiming.lastMs = performance.now() - t0
    rematchTiming.totalMs += rematchTiming.lastMs
    rematchTiming.flushes++
  }
}

function rematch(deps: AppDeps, flush: { changes: SetChange[]; inserted: number[]; pruned: number[] }) {
  const db = deps.db.$client
  const feeds = !!db.query('SELECT 1 FROM vuln_affected LIMIT 1').get()
  // The index is changed in step with vuln_matches here, so a flush of a few minions never reloads every match.
  const index = matchIndex(db)
  let changed = feeds && flush.inserted.length > 0 && matchKeys(db, flush.inserted, null, index)
  const scratch = { a: new VulnSet(), b: new VulnSet() }
  for (const c of flush.changes) {
    const old = storedEcosystem(deps, c.num)
    applyMinionChange(db, index, scratch, {
      num: c.num, minionId: c.minionId, oldEco: old?.e ?? null, newEco: ecosystemOf(deps, c.minionId), before: old ? c.before : null, after: c.after,
    })
  }
  // Gone keys are forgotten after the diffs above, which still needed their matches for the sets that held them.
  if (flush.pruned.length && index.size) {
    const drop = db.query('DELETE FROM vuln_matches WHERE key_id = ?1')
    for (const id of flush.pruned) if (drop.run(id).changes > 0) changed = true, index.dropKey(id)
  }
  if (changed) bumpGeneration(db, index)
}

/** Re-counts the minions whose ecosystem moved with the grains just stored (an upgrade, or grains arriving after packages). */
export function watchGrains(deps: AppDeps, minionIds: string[]) {
  const db = deps.db.$client
  db.transaction(() => {
    const index = matchIndex(db)
    const scratch = { a: new VulnSet(), b: new VulnSet() }
    const set = db.query<{ num: number; keys: Uint8Array }, [string]>('SELECT rowid AS num, keys FROM minion_package_sets WHERE minion_id = ?1')
    let moved = false
    for (const id of minionIds) {
      const s = set.get(id)
      if (!s) continue
      const old = storedEcosystem(deps, s.num)
      const eco = ecosystemOf(deps, id)
      if (old && old.e === eco) continue
      const ids = decodeKeyIds(s.keys)
      moved = true
      applyMinionChange(db, index, scratch, { num: s.num, minionId: id, oldEco: old?.e ?? null, newEco: eco, before: old ? ids : null, after: ids })
    }
    // The counts moved outside a flush: a recount tallied before this (a CLI import beside the service) must not land.
    if (moved) bumpGeneration(db, index)
  })()
}

/**
 * Brings an install whose package sets predate the vulnerability tables up to date at start: the holder index built
 * from the sets, every minion with a set given its ecosystem, and the counts made if feeds are already imported.
 */
export function ensureFindings(deps: AppDeps) {
  const db = deps.db.$client
  const built = ensureHolders(db)
  const missing = db.query<{ num: number; minion_id: string }, []>(
    'SELECT s.rowid AS num, s.minion_id FROM minion_package_sets s LEFT JOIN vuln_minions v ON v.minion_num = s.rowid WHERE v.minion_num IS NULL',
  ).all()
  if (!missing.length) return
  db.transaction(() => {
    const put = db.query('INSERT INTO vuln_minions (minion_num, minion_id, ecosystem) VALUES (?1, ?2, ?3)')
    for (const m of missing) put.run(m.num, m.minion_id, ecosystemOf(deps, m.minion_id))
    if (db.query('SELECT 1 FROM vuln_affected LIMIT 1').get()) recountAll(db)
  })()
  deps.log.info('vulnerability tables prepared', { holders_built: built, minions: missing.length })
}
