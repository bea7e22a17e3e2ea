/**
 * This process as one instance of a cluster on one database (contract §15): its row and heartbeat, its end of the bus
 * (what other instances changed is applied here: settings, credentials, stored activity, forgotten totals) and the
 * leaderships it competes for. On SQLite it is the one instance: it leads everything, and the bus hears nobody.
 */
import type { AppDeps } from '../deps'
import { newId } from '../lib/ids'
import { forgetInstance, heartbeat, type Me } from '../features/instances/service'
import { reloadSection, resyncSettings } from '../features/settings/service'
import { authChangedElsewhere } from '../features/auth/changes'
import { activityMayBeMissed, publishStoredElsewhere } from '../features/activity/feed'
import { eventsIn } from '../features/activity/service'
import { parseIdRuns } from '../features/activity/id-runs'
import { forgetTotalsHere } from '../features/activity/totals'
import { Bus } from './bus'
import { Leadership, LEADERSHIP_TICK_MS, type LeaderWork } from './leadership'
import type { ClusterEngine } from './engine'

/** How often an instance writes its row: well inside the minute after which it is no longer listed. */
export const HEARTBEAT_MS = 5000
/** The most events one activity notice names (a batch is at most 2,000; more is a bug's). */
const MAX_NOTICE_SPAN = 10_000

/** One instance: its identity, bus and leaderships. */
export class ClusterNode {
  readonly me: Me
  readonly bus: Bus
  readonly leadership: Leadership
  private beating: ReturnType<typeof setInterval> | null = null
  private beat: Promise<void> | null = null
  private unsubscribe: (() => void)[] = []
  private firstRound = true

  constructor(private readonly deps: AppDeps, private readonly engine: ClusterEngine, opts: { heartbeatMs?: number; leadershipTickMs?: number } = {}) {
    this.me = { id: newId(), startedAt: deps.clock.now() }
    this.bus = new Bus(this.me.id, engine.transport, (e) => deps.log.warn('cluster bus message failed', { error: e instanceof Error ? e.message : String(e) }))
    this.leadership = new Leadership(engine.tryLock, deps.log, opts.leadershipTickMs ?? LEADERSHIP_TICK_MS)
    this.leadership.onChange = () => void this.heartbeat()
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS
  }

  private readonly heartbeatMs: number

  /** Competes for `name`; `work.gained` is told whether it takes over from another instance (not at this start). */
  compete(name: string, work: { gained(takeover: boolean): Promise<void> | void; lost(): Promise<void> | void }) {
    const w: LeaderWork = { gained: () => work.gained(!this.firstRound), lost: () => work.lost() }
    this.leadership.compete(name, w)
  }

  /** Stops competing for `name` (its salt source was removed). */
  withdraw(name: string) {
    return this.leadership.withdraw(name)
  }

  /** Writes the row, listens on the bus and applies what other instances tell; `deps.bus` publishes from here on. */
  async start() {
    await this.heartbeat()
    const deps = this.deps
    const on = (topic: string, fn: (data: string) => Promise<void> | void) =>
      this.unsubscribe.push(this.bus.subscribe(topic, (data) => void Promise.resolve(fn(data)).catch((e) => deps.log.warn('cluster notice not applied', { topic, error: String(e) }))))
    on('settings', (section) => reloadSection(deps, section))
    on('auth', () => authChangedElsewhere(deps))
    on('totals', () => forgetTotalsHere(deps))
    // A salt source added, changed or removed through another instance: this one's registry follows.
    on('salt-source', (name) => deps.onSaltSourceChanged?.(name))
    // Exactly the events that instance stored (id runs): a listener hears each once, however ids interleave.
    on('activity', async (text) => {
      const runs = parseIdRuns(text, MAX_NOTICE_SPAN)
      if (runs) publishStoredElsewhere(deps, await eventsIn(deps, runs))
    })
    // The listening connection came back: what was said meanwhile is lost, so everything it could have said is re-read.
    this.unsubscribe.push(this.bus.onResync(() => {
      void resyncSettings(deps).catch((e) => deps.log.warn('settings not re-read after the bus reconnected', { error: String(e) }))
      authChangedElsewhere(deps)
      forgetTotalsHere(deps)
      activityMayBeMissed(deps)
      deps.onSaltSourcesResync?.()
    }))
    await this.bus.start()
    deps.bus = this.bus
    deps.log.info('cluster instance', { instance: this.me.id, engine: deps.db.engine })
    this.beating ??= setInterval(() => void this.heartbeat(), this.heartbeatMs)
  }

  /** Takes every leadership it can now, then keeps trying (and checking those it holds). */
  async lead() {
    await this.leadership.start()
    this.firstRound = false
  }

  /** Writes this instance's row with what it leads now (one write at a time). */
  heartbeat(): Promise<void> {
    // Queued behind a write under way: a change of leads made meanwhile is written after it, never overwritten by it.
    const next: Promise<void> = (this.beat ?? Promise.resolve())
      .then(() => {
        const leads = this.leadership.leads()
        // The state of each salt source led here: followers' Salt health shows it (features/salt-health).
        const health = Object.fromEntries((this.deps.salt?.sources() ?? []).filter((s) => s.leads && leads.includes(s.source)).map((s) => [s.source, s.health()]))
        return heartbeat(this.deps, this.me, leads, health)
      })
      .catch((e) => this.deps.log.warn('instance heartbeat failed', { error: e instanceof Error ? e.message : String(e) }))
      .finally(() => {
        if (this.beat === next) this.beat = null
      })
    this.beat = next
    return next
  }

  /** Gives back every leadership (its work stops first), stops listening and removes the row. */
  async stop() {
    if (this.beating) clearInterval(this.beating)
    this.beating = null
    await this.leadership.stop()
    for (const u of this.unsubscribe) u()
    this.unsubscribe = []
    await this.bus.stop()
    if (this.deps.bus === this.bus) delete this.deps.bus
    await this.beat
    await forgetInstance(this.deps, this.me).catch(() => {})
    await this.engine.close()
  }
}
