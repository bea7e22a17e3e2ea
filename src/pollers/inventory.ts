/** Inventory collection: pkg.list_pkgs and os_family on present minions, batch by batch, one batch in memory at a time. */
import type { Poller } from './scheduler'
import type { SaltRuntime } from '../salt/runtime'
import { finishRefresh, progressRefresh, replacePackageSets, sourceOf, startRefresh, type PackageSet, type Pkg } from '../features/inventory/service'
import { readSection } from '../features/settings/service'
import { globMatch } from '../lib/glob'
import { AppError } from '../http/errors'

/** Reads one minion's pkg.list_pkgs value: lists of versions, comma-joined strings, or {version, arch} objects. */
export function parsePkgList(v: unknown): Pkg[] | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null
  const out: Pkg[] = []
  for (const [name, val] of Object.entries(v as Record<string, unknown>)) {
    const items = Array.isArray(val) ? val : typeof val === 'string' ? val.split(',') : [val]
    for (const it of items) {
      if (typeof it === 'string' && it) out.push({ name, version: it })
      else if (it && typeof it === 'object' && typeof (it as any).version === 'string')
        out.push({ name, version: (it as any).version, arch: typeof (it as any).arch === 'string' ? (it as any).arch : '' })
    }
  }
  return out
}

/** Runs one refresh of the minions matching a glob; returns the number of minions stored. */
export async function refreshInventory(rt: SaltRuntime, id: string, target: string, batchSize: number): Promise<number> {
  const db = rt.deps.db.$client
  const ids = db.query<{ id: string }, []>("SELECT id FROM minions WHERE key_state = 'accepted' AND online = 1 ORDER BY id").all().map((r) => r.id).filter((m) => globMatch(target, m))
  let asked = 0
  let answered = 0
  let stored = 0
  try {
    for (let i = 0; i < ids.length; i += batchSize) {
      const batch = ids.slice(i, i + batchSize)
      asked += batch.length
      const fams = (await rt.client.local(batch, 'grains.get', { arg: ['os_family'], tgt_type: 'list' })) ?? {}
      const pkgs = (await rt.client.local(batch, 'pkg.list_pkgs', { kwarg: { versions_as_list: true }, tgt_type: 'list' })) ?? {}
      const sets: PackageSet[] = []
      for (const m of batch) {
        const list = parsePkgList(pkgs[m])
        if (!list) continue
        const fam = fams[m]
        sets.push({ minionId: m, source: sourceOf(typeof fam === 'string' ? fam : null), packages: list })
      }
      answered += sets.length
      stored += replacePackageSets(rt.deps, sets)
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
