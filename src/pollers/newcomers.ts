/**
 * A newly accepted minion is filled at once (contract §17): its grains, then its packages (an inventory refresh of
 * just the new minions, whose flush matches their vulnerabilities), through the grains and inventory paths the pollers
 * use, instead of at the next grains tick and the next 6-hourly refresh. A minion whose key was just accepted may not
 * have connected yet (it retries its authentication every acceptance_wait_time, 10 s by default), so what did not
 * answer is asked again every RETRY_MS until GIVE_UP_MS; the regular pollers take over after that.
 */
import { errorText } from '../salt/errors'
import { RefreshBusy } from '../lib/errors'
import { startInventoryRefresh } from '../features/inventory/refresh'
import { packagesCollectedSince } from '../features/inventory/service'
import { acceptedAmong } from '../features/minions/service'
import { collectGrains, type PollerContext } from './definitions'

/** The first try waits this long after the accept: the minion needs a moment to authenticate again. */
export const FIRST_TRY_MS = 2_000
/** The pause between tries for the minions that did not answer yet. */
export const RETRY_MS = 10_000
/** After this long without an answer a minion is left to the regular pollers. */
export const GIVE_UP_MS = 10 * 60_000

interface Waiting {
  since: number
  grains: boolean
  packages: boolean
}

/** The minions waiting to be filled, and the loop that fills them. */
export class Newcomers {
  private waiting = new Map<string, Waiting>()
  private timer: ReturnType<typeof setTimeout> | null = null
  private running: Promise<void> | null = null
  private stopped = false

  /** `enabled(poller)`: whether the grains or inventory poller is on (a part the operator turned off is not collected). */
  constructor(private c: PollerContext, private enabled: (poller: 'grains' | 'inventory') => boolean) {}

  /** Minions whose key was just accepted: filled from FIRST_TRY_MS on. */
  add(ids: string[]) {
    if (this.stopped) return
    const now = Date.now()
    for (const id of ids) this.waiting.set(id, { since: now, grains: !this.enabled('grains'), packages: !this.enabled('inventory') })
    for (const [id, w] of this.waiting) if (w.grains && w.packages) this.waiting.delete(id)
    if (this.waiting.size) this.wake(FIRST_TRY_MS)
  }

  /** The minions still waiting, by id (for tests and the log). */
  pending(): string[] {
    return [...this.waiting.keys()].sort()
  }

  /** Runs one round now and waits for it (tests; the loop calls it too). */
  async round(): Promise<void> {
    this.running ??= this.fill().finally(() => (this.running = null))
    return this.running
  }

  /** Stops the loop and waits for a round in flight. */
  async stop() {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.running
  }

  private wake(ms: number) {
    if (this.timer || this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = null
      void this.round().then(() => {
        if (this.waiting.size) this.wake(RETRY_MS)
      })
    }, ms)
  }

  /** One round: grains of those without, then one inventory refresh of those without packages. Never rejects. */
  private async fill() {
    const log = this.c.deps.log
    try {
      const now = Date.now()
      // A key rejected or deleted meanwhile is no longer a minion to fill.
      const accepted = await acceptedAmong(this.c.deps, [...this.waiting.keys()])
      for (const [id, w] of this.waiting) {
        if (!accepted.has(id)) this.waiting.delete(id)
        else if (now - w.since >= GIVE_UP_MS) {
          this.waiting.delete(id)
          log.warn('a newly accepted minion did not answer; the regular pollers will collect it', { minion: id })
        }
      }
      const noGrains = [...this.waiting].filter(([, w]) => !w.grains).map(([id]) => id)
      if (noGrains.length) for (const id of await collectGrains(this.c, noGrains)) this.waiting.get(id)!.grains = true
      // Packages after grains: the flush matches vulnerabilities in the ecosystem the grains name.
      const noPackages = [...this.waiting].filter(([, w]) => w.grains && !w.packages).map(([id]) => id)
      if (noPackages.length) {
        const since = this.c.deps.clock.now()
        try {
          await (await startInventoryRefresh(this.c.deps, this.c.inventory(), noPackages.join(','), noPackages)).done
        } catch (e) {
          // A refresh of the whole fleet is running: these minions are asked at the next round.
          if (!(e instanceof RefreshBusy)) throw e
        }
        for (const id of await packagesCollectedSince(this.c.deps, noPackages, since)) this.waiting.get(id)!.packages = true
      }
      for (const [id, w] of this.waiting) {
        if (!w.grains || !w.packages) continue
        this.waiting.delete(id)
        log.info('newly accepted minion filled', { minion: id })
      }
    } catch (e) {
      log.warn('filling newly accepted minions failed', { error: errorText(e), minions: this.waiting.size })
    }
  }
}
