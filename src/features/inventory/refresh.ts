/**
 * Inventory collection: pkg.list_pkgs and os_family on present minions, in half batches with one request in flight
 * while the previous answer is read. A reader (read.ts) scans each answer into catalog key indexes as it streams in, on
 * a worker thread when one starts, while this loop stores the compact sets every SALTDECK_INVENTORY_FLUSH minions (or
 * 10 s) in one transaction, which keeps the aggregate writes per refresh small.
 */
import type { AppDeps } from '../../deps'
import { RefreshBusy } from '../../lib/errors'
import { errorText, SaltNotConfigured } from '../../salt/errors'
import { globMatch } from '../../lib/glob'
import { presentMinionIds } from '../minions/service'
import { finishRefresh, progressRefresh, refreshStartedAt, sourceOf, startRefresh } from './service'
import { PackageSetWriter } from './writer'
import { openReader, type ReaderWiring } from './read'
import { internalJid } from '../jobs/service'
import { learnSources } from './sources'
import { minionSourcesOf } from '../minions/service'

/** The longest the collected sets wait in memory before they are stored. */
const FLUSH_MS = 10_000

/** One salt source a refresh asks through: its name and its salt-api client. */
export interface RefreshSource {
  source: string
  client: ReaderWiring['client']
}

/**
 * How a refresh runs: salt, log and worker choice, minions per batch, minions per stored flush, and the salt sources
 * with a complete connection (`default` first; without them, everything goes through `client` as `default`).
 */
export interface RefreshOptions extends ReaderWiring {
  batch: number
  flushMinions: number
  sources?: () => RefreshSource[]
}

/**
 * Which source asks each minion (contract §15 "Several masters"), as jobs are routed: `default` when it has seen the
 * minion (or no source has), else the first usable source that has; in the order of the sources.
 */
async function bySource(deps: AppDeps, opts: RefreshOptions, ids: string[]): Promise<(RefreshSource & { ids: string[] })[]> {
  const via = opts.sources?.() ?? []
  if (via.length <= 1) return [{ source: via[0]?.source ?? 'default', client: via[0]?.client ?? opts.client, ids }]
  const seen = await minionSourcesOf(deps, ids)
  const names = new Set(via.map((s) => s.source))
  const groups = new Map<string, string[]>()
  for (const id of ids) {
    const of = seen.get(id) ?? []
    const name = of.length === 0 || of.includes('default') ? 'default' : (of.find((n) => names.has(n)) ?? 'default')
    const g = groups.get(name)
    if (g) g.push(id)
    else groups.set(name, [id])
  }
  return via.filter((s) => groups.has(s.source)).map((s) => ({ ...s, ids: groups.get(s.source)! }))
}

/** The options a service uses by default: its configuration's batch and flush sizes, on a worker thread. */
export const refreshOptions = (deps: AppDeps, client: ReaderWiring['client'], worker = true): RefreshOptions =>
  ({ client, log: deps.log, worker, batch: deps.config.inventoryBatch, flushMinions: deps.config.inventoryFlushMinions, internalJid: () => internalJid(deps) })

/**
 * Runs one refresh (already started as `id`) of the present minions matching a glob, or of the listed minions
 * (`only`: a newly accepted minion is asked before presence has seen it); returns the number of minions answered.
 */
export async function refreshInventory(deps: AppDeps, opts: RefreshOptions, id: string, target: string, only?: string[]): Promise<number> {
  const ids = only ?? (await presentMinionIds(deps)).filter((m) => globMatch(target, m))
  const groups = await bySource(deps, opts, ids)
  // Every set of one refresh counts as collected at the refresh's start: last_seen then moves once per refresh instead of
  // once per flush, which spares a package_stats row write per name and flush.
  const collectedAt = (await refreshStartedAt(deps, id)) ?? deps.clock.now()
  const writer = await PackageSetWriter.open(deps)
  const n = { asked: 0, answered: 0, stored: 0 }
  const failed: { source: string; error: unknown }[] = []
  for (const g of groups) {
    try {
      await refreshThrough(deps, opts, writer, g, id, collectedAt, n)
    } catch (e) {
      // One master failing leaves the others' minions collected; with one source its error is the refresh's, as before.
      if (groups.length === 1) {
        await finishRefresh(deps, id, errorText(e))
        throw e
      }
      deps.log.warn('inventory refresh: a salt source failed', { source: g.source, error: errorText(e) })
      failed.push({ source: g.source, error: e })
    }
  }
  if (failed.length === groups.length && failed.length) {
    await finishRefresh(deps, id, failed.map((f) => `${f.source}: ${errorText(f.error)}`).join('; '))
    throw failed[0]!.error
  }
  await finishRefresh(deps, id, failed.length ? failed.map((f) => `salt source ${f.source}: ${errorText(f.error)}`).join('; ') : undefined)
  return n.answered
}

/** Asks one salt source's minions of a refresh and stores their sets as collected through it; adds to the counts `n`. */
async function refreshThrough(
  deps: AppDeps, opts: RefreshOptions, writer: PackageSetWriter, g: RefreshSource & { ids: string[] }, id: string, collectedAt: number,
  n: { asked: number; answered: number; stored: number },
) {
  // Salt is asked in half batches, one in flight while the previous answer is read: one batch's returns at most.
  const half = Math.max(1, Math.ceil(opts.batch / 2))
  const batches: string[][] = []
  for (let i = 0; i < g.ids.length; i += half) batches.push(g.ids.slice(i, i + half))
  if (!batches.length) return
  writer.saltSource = g.source
  let lastFlush = performance.now()
  // The reader may run a flush's worth of batches ahead (compact sets only), so it keeps reading while a flush runs.
  const reader = await openReader({ ...opts, client: g.client }, batches, writer.catalog, Math.min(128, Math.ceil(opts.flushMinions / half) + 2))
  try {
    for (let b = 0; b < batches.length; b++) {
      const r = await reader.next()
      n.asked += r.ids.length
      r.ids.forEach((m, j) => {
        if (!r.sets[j]) return
        writer.add(m, sourceOf(r.fams[j]), r.sets[j]!)
        n.answered++
      })
      if (b === batches.length - 1 || writer.pendingMinions >= opts.flushMinions || performance.now() - lastFlush >= FLUSH_MS) {
        n.stored += await writer.flush(collectedAt)
        lastFlush = performance.now()
      }
      await progressRefresh(deps, id, n)
    }
  } finally {
    reader.close()
  }
}

/**
 * Starts a refresh in the background; SaltNotConfigured without a salt connection (nothing is recorded: a refresh
 * that asks nobody is no refresh), RefreshBusy when one is running. `only` lists the minions to ask instead of the
 * present ones matching `target` (which then names them for the record). `done` settles with the minions answered.
 */
export async function startInventoryRefresh(deps: AppDeps, opts: RefreshOptions, target = '*', only?: string[]) {
  const c = opts.client.credentials()
  if (!c.url || !c.username || !c.password) throw new SaltNotConfigured()
  const r = await startRefresh(deps, target)
  if (!r) throw new RefreshBusy()
  const done = refreshInventory(deps, opts, r.refresh_id, target, only)
    .then(async (answered) => {
      // New keys learn their source package (for vulnerability matching); a failure leaves them for the next refresh.
      await learnSources(deps, opts.client, opts.internalJid).catch((e) => deps.log.warn('source package learning failed', { error: errorText(e) }))
      return answered
    })
    .catch((e) => {
      deps.log.warn('inventory refresh failed', { error: errorText(e) })
      return 0
    })
  return { ...r, done }
}
