/**
 * Inventory collection: pkg.list_pkgs and os_family on present minions, in half batches with one request in flight
 * while the previous answer is read. A reader (inventory-read.ts) scans each answer into catalog key indexes as it
 * streams in, on a worker thread when one starts, while this loop stores the compact sets every
 * SALTDECK_INVENTORY_FLUSH minions (or 10 s) in one transaction, which keeps the aggregate writes per refresh small.
 */
import type { Poller } from './scheduler'
import type { SaltRuntime } from '../salt/runtime'
import { finishRefresh, progressRefresh, sourceOf, startRefresh } from '../features/inventory/service'
import { PackageSetWriter } from '../features/inventory/writer'
import { readSection } from '../features/settings/service'
import { globMatch } from '../lib/glob'
import { AppError } from '../http/errors'
import { openReader } from './inventory-read'

export { parsePkgList } from './pkg-scan'

/** The longest the collected sets wait in memory before they are stored. */
const FLUSH_MS = 10_000

/** Runs one refresh of the minions matching a glob; returns the number of minions stored. */
export async function refreshInventory(rt: SaltRuntime, id: string, target: string, batchSize: number, flushMinions = rt.deps.config.inventoryFlushMinions): Promise<number> {
  const db = rt.deps.db.$client
  const ids = db.query<{ id: string }, []>("SELECT id FROM minions WHERE key_state = 'accepted' AND online = 1 ORDER BY id").all().map((r) => r.id).filter((m) => globMatch(target, m))
  // Salt is asked in half batches, one in flight while the previous answer is read: one batch's returns at most.
  const half = Math.max(1, Math.ceil(batchSize / 2))
  const batches: string[][] = []
  for (let i = 0; i < ids.length; i += half) batches.push(ids.slice(i, i + half))
  // Every set of one refresh counts as collected at the refresh's start: last_seen then moves once per refresh instead of
  // once per flush, which spares a package_stats row write per name and flush.
  const collectedAt = db.query<{ t: number }, [string]>('SELECT started_at AS t FROM inventory_refreshes WHERE id = ?1').get(id)?.t ?? rt.deps.clock.now()
  const writer = new PackageSetWriter(rt.deps)
  let asked = 0
  let answered = 0
  let stored = 0
  let lastFlush = performance.now()
  // The reader may run a flush's worth of batches ahead (compact sets only), so it keeps reading while a flush runs.
  const reader = batches.length ? await openReader(rt, batches, writer.catalog, Math.min(128, Math.ceil(flushMinions / half) + 2)) : null
  try {
    for (let b = 0; b < batches.length; b++) {
      const r = await reader!.next()
      asked += r.ids.length
      r.ids.forEach((m, j) => {
        if (!r.sets[j]) return
        writer.add(m, sourceOf(r.fams[j]), r.sets[j]!)
        answered++
      })
      if (b === batches.length - 1 || writer.pendingMinions >= flushMinions || performance.now() - lastFlush >= FLUSH_MS) {
        stored += writer.flush(collectedAt)
        lastFlush = performance.now()
      }
      progressRefresh(rt.deps, id, { asked, answered, stored })
    }
    finishRefresh(rt.deps, id)
  } catch (e) {
    finishRefresh(rt.deps, id, e instanceof AppError ? e.detail : (e as Error).message)
    throw e
  } finally {
    reader?.close()
  }
  return answered
}

/** Starts a refresh in the background; 409 when one is running. */
export function startInventoryRefresh(rt: SaltRuntime, target = '*') {
  const r = startRefresh(rt.deps, target)
  if (!r) throw new AppError(409, 'Inventory refresh already running')
  const done = refreshInventory(rt, r.refresh_id, target, rt.inventoryBatch).catch((e) => {
    rt.deps.log.warn('inventory refresh failed', { error: (e as Error).message })
    return 0
  })
  return { ...r, done }
}

/** inventory: the periodic full refresh. */
export const inventoryPoller = (rt: SaltRuntime): Poller => ({
  name: 'inventory',
  intervalSeconds: () => Number(readSection(rt.deps, 'pollers').inventory_refresh_minutes ?? 0) * 60,
  initialDelaySeconds: () => Number(readSection(rt.deps, 'pollers').inventory_refresh_initial_delay_s ?? 0),
  async tick() {
    const r = startInventoryRefresh(rt)
    return await r.done
  },
})
