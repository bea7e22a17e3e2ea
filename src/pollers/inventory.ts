/**
 * Inventory collection: pkg.list_pkgs and os_family on present minions, batch by batch. Each answer is scanned from its
 * bytes into catalog key indexes and dropped before the next batch is asked for (so one batch's returns are in memory),
 * while that next request is already running on salt's side; the compact sets are stored every
 * SALTDECK_INVENTORY_FLUSH minions (or 10 s) in one transaction, which keeps the aggregate writes per refresh small.
 */
import type { Poller } from './scheduler'
import type { SaltRuntime } from '../salt/runtime'
import { finishRefresh, progressRefresh, sourceOf, startRefresh } from '../features/inventory/service'
import { PackageSetWriter } from '../features/inventory/writer'
import { readSection } from '../features/settings/service'
import { globMatch } from '../lib/glob'
import { AppError } from '../http/errors'
import { SaltRejected } from '../salt/client'
import { scanPkgAnswer } from './pkg-scan'

export { parsePkgList } from './pkg-scan'

/** The longest the collected sets wait in memory before they are stored. */
const FLUSH_MS = 10_000

/** Runs one refresh of the minions matching a glob; returns the number of minions stored. */
export async function refreshInventory(rt: SaltRuntime, id: string, target: string, batchSize: number, flushMinions = rt.deps.config.inventoryFlushMinions): Promise<number> {
  const db = rt.deps.db.$client
  const ids = db.query<{ id: string }, []>("SELECT id FROM minions WHERE key_state = 'accepted' AND online = 1 ORDER BY id").all().map((r) => r.id).filter((m) => globMatch(target, m))
  const batches: string[][] = []
  for (let i = 0; i < ids.length; i += batchSize) batches.push(ids.slice(i, i + batchSize))
  const ask = (batch: string[]) => {
    const p = Promise.all([
      rt.client.local(batch, 'grains.get', { arg: ['os_family'], tgt_type: 'list' }),
      rt.client.localBody(batch, 'pkg.list_pkgs', { kwarg: { versions_as_list: true }, tgt_type: 'list' }),
    ])
    p.catch(() => {}) // awaited later; a failure must not count as unhandled meanwhile
    return p
  }
  // Every set of one refresh counts as collected at the refresh's start: last_seen then moves once per refresh instead of
  // once per flush, which spares a package_stats row write per name and flush.
  const collectedAt = db.query<{ t: number }, [string]>('SELECT started_at AS t FROM inventory_refreshes WHERE id = ?1').get(id)?.t ?? rt.deps.clock.now()
  const writer = new PackageSetWriter(rt.deps)
  let asked = 0
  let answered = 0
  let stored = 0
  let lastFlush = performance.now()
  try {
    let next = batches.length ? ask(batches[0]!) : null
    for (let b = 0; b < batches.length; b++) {
      const batch = batches[b]!
      const [fams, body] = await next!
      asked += batch.length
      let sets
      try {
        sets = scanPkgAnswer(body, writer.catalog)
      } catch (e) {
        if (e instanceof SyntaxError) throw new SaltRejected('unreadable answer', 200)
        throw e
      }
      next = b + 1 < batches.length ? ask(batches[b + 1]!) : null
      for (const m of batch) {
        const keys = sets.get(m)
        if (!keys) continue
        const fam = fams?.[m]
        writer.add(m, sourceOf(typeof fam === 'string' ? fam : null), keys)
        answered++
      }
      if (!next || writer.pendingMinions >= flushMinions || performance.now() - lastFlush >= FLUSH_MS) {
        stored += writer.flush(collectedAt)
        lastFlush = performance.now()
      }
      progressRefresh(rt.deps, id, { asked, answered, stored })
    }
    finishRefresh(rt.deps, id)
  } catch (e) {
    finishRefresh(rt.deps, id, e instanceof AppError ? e.detail : (e as Error).message)
    throw e
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
