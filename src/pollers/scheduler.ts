/**
 * The named registry of pollers on croner: each starts after its initial delay, runs every interval, never overlaps
 * itself, is rescheduled at once when settings change, and counts its errors while the loop goes on.
 */
import { Cron } from 'croner'
import { iso, isoOrNull, type Clock } from '../lib/clock'
import type { Logger } from '../lib/log'
import { NotFound, PollerBusy } from '../lib/errors'
import { errorText, SaltMasterDown, SaltNotConfigured, SaltUnavailable } from '../salt/errors'
import type { PollerControl } from '../deps'

/** One poller: its timing from the settings and one tick's work (returns the number of items processed). */
export interface Poller {
  name: string
  /** Seconds between ticks; 0 = off. */
  intervalSeconds(): number
  /** Seconds to wait after start or reschedule before the first tick. */
  initialDelaySeconds(): number
  tick(): Promise<number>
  /** Whether each tick asks the salt-master (through salt-api): such a tick is skipped while the master is known down. */
  needsMaster?: boolean
  /** Whether each tick asks minions through the master (they reconnect for a while after the master is back). */
  asksMinions?: boolean
}

/** What the scheduler needs: the clock, the log, and whether the salt-master is known not to answer now. */
export interface SchedulerDeps {
  clock: Clock
  log: Logger
  /** True while the master is known down: a call then hangs in salt-api and reaches the master in a burst when it is back. */
  masterDown?: () => boolean
}

interface State {
  runs: number
  errors: number
  totalMs: number
  lastStart: number | null
  lastSuccess: number | null
  lastDurationMs: number | null
  lastError: string | null
  lastItems: number | null
  /** Whether the last error was salt-api not answering (it clears when salt-api answers again). */
  saltAbsent: boolean
  /** Whether a tick was skipped because the master did not answer (the poller runs once it answers again). */
  skippedForMaster: boolean
}

/** Starts, reschedules, stops and reports pollers. */
export class Scheduler implements PollerControl {
  private jobs = new Map<string, Cron>()
  private state = new Map<string, State>()
  private running = new Map<string, Promise<void>>()
  /** The ticks waiting for a master's minions to reconnect before they run (masterAnswers). */
  private deferred = new Map<string, ReturnType<typeof setTimeout>>()
  /** The pollers this instance runs now: all of them alone, those of what it leads in a cluster (contract §15). */
  private active = new Set<string>()

  constructor(private deps: SchedulerDeps, readonly pollers: Poller[]) {
    for (const p of pollers) this.state.set(p.name, { runs: 0, errors: 0, totalMs: 0, lastStart: null, lastSuccess: null, lastDurationMs: null, lastError: null, lastItems: null, saltAbsent: false, skippedForMaster: false })
  }

  /** Schedules these pollers (default: every one) whose interval is not 0. */
  start(names: string[] = this.names) {
    for (const p of this.pollers) {
      if (!names.includes(p.name)) continue
      this.active.add(p.name)
      this.schedule(p)
    }
  }

  /** Unschedules these pollers (leadership lost) and waits for their running ticks. */
  async stopSome(names: string[]) {
    for (const n of names) {
      this.undefer(n)
      this.active.delete(n)
      this.jobs.get(n)?.stop()
      this.jobs.delete(n)
    }
    await Promise.all(names.map((n) => this.running.get(n)))
  }

  /** Whether this poller is scheduled by this instance (it leads the poller's work). */
  isActive(name: string) {
    return this.active.has(name)
  }

  private schedule(p: Poller, delaySeconds = p.initialDelaySeconds()) {
    this.jobs.get(p.name)?.stop()
    this.jobs.delete(p.name)
    const every = p.intervalSeconds()
    if (!this.active.has(p.name) || every <= 0) return
    const startAt = new Date(Date.now() + delaySeconds * 1000)
    // Each whole second matches the pattern; `interval` spaces the runs and `protect` forbids overlap.
    const job = new Cron('* * * * * *', { interval: every, startAt, protect: true, name: `saltdeck-${p.name}-${crypto.randomUUID()}` }, () => this.run(p.name))
    this.jobs.set(p.name, job)
  }

  /** Re-reads every poller's timing (settings changed): no restart needed. */
  reschedule() {
    for (const p of this.pollers) this.schedule(p)
  }

  /** Re-reads the timing of some pollers whose interval follows the event stream, with a first tick in a second. */
  retime(names: string[]) {
    for (const p of this.pollers) if (names.includes(p.name)) this.schedule(p, 1)
  }

  /** Whether a poller runs on its own (its interval is not 0). */
  enabled(name: string) {
    return (this.pollers.find((p) => p.name === name)?.intervalSeconds() ?? 0) > 0
  }

  /** The poller names, in order. */
  get names(): string[] {
    return this.pollers.map((p) => p.name)
  }

  /**
   * Starts one poller's tick now in the background; NotFound for an unknown name, PollerBusy when it is already running,
   * SaltMasterDown when it asks the master and the master does not answer (it then runs once it does).
   */
  runNow(name: string): Promise<void> {
    const p = this.pollers.find((x) => x.name === name)
    const s = this.state.get(name)
    if (!p || !s) throw new NotFound('Poller')
    if (this.running.has(name)) throw new PollerBusy()
    if (this.waitsForMaster(p)) {
      s.skippedForMaster = true
      throw new SaltMasterDown(`The salt-master does not answer: the ${name} poller runs once it does`)
    }
    return this.run(name)
  }

  /** Whether this poller asks the master and the master is known not to answer now. */
  private waitsForMaster(p: Poller) {
    return p.needsMaster === true && this.deps.masterDown?.() === true
  }

  /** One tick with overlap guard, timing, error capture and a log line. */
  run(name: string): Promise<void> {
    const existing = this.running.get(name)
    if (existing) return existing
    // The entry is removed in a callback, which always runs after `set` below: a tick that throws before its first
    // await (synchronously) finishes its body at once, and removing the entry there would leave it stored for good.
    const done = this.tick(name).finally(() => this.running.delete(name))
    this.running.set(name, done)
    return done
  }

  /** The body of one tick: never rejects. */
  private async tick(name: string): Promise<void> {
    const p = this.pollers.find((x) => x.name === name)!
    const s = this.state.get(name)!
    // Asking a stopped master only leaves a call hanging in salt-api; those calls all reach the master the moment it
    // is back, while its minions re-authenticate (contract §17). Salt health already names the master.
    if (this.waitsForMaster(p)) {
      s.skippedForMaster = true
      this.deps.log.debug('poller tick skipped: the salt-master does not answer', { poller: name })
      return
    }
    s.skippedForMaster = false
    const t0 = Date.now()
    s.lastStart = this.deps.clock.now()
    try {
      s.lastItems = await p.tick()
      s.lastError = null
      s.saltAbsent = false
      s.lastSuccess = this.deps.clock.now()
      // A routine tick that found nothing (the alerts poller every 5 s) is debug: at info it was 17,000 lines a day.
      this.deps.log[s.lastItems ? 'info' : 'debug']('poller tick', { poller: name, items: s.lastItems, ms: Date.now() - t0 })
    } catch (e) {
      // Before the salt connection is entered there is nothing to ask: not an error of the poller.
      if (e instanceof SaltNotConfigured) {
        s.lastError = null
        return
      }
      s.errors++
      s.lastError = errorText(e)
      s.saltAbsent = e instanceof SaltUnavailable
      this.deps.log.warn('poller tick failed', { poller: name, error: s.lastError, ms: Date.now() - t0 })
    } finally {
      s.runs++
      s.lastDurationMs = Date.now() - t0
      s.totalMs += s.lastDurationMs
    }
  }

  /**
   * salt-api answers again: the errors its absence caused are cleared at once (not at the pollers' next tick, up to
   * hours away), and those pollers run now. Returns their names.
   */
  saltAnswers(): string[] {
    const names: string[] = []
    for (const p of this.pollers) {
      const s = this.state.get(p.name)!
      if (!s.saltAbsent) continue
      s.lastError = null
      s.saltAbsent = false
      names.push(p.name)
      if (p.intervalSeconds() > 0) void this.run(p.name)
    }
    return names
  }

  /**
   * The master answers again: the pollers that skipped a tick while it did not run now, those that ask minions after
   * `minionsAfterMs` (the minions re-authenticate meanwhile: asked at once, most would not answer). Each stays
   * waiting_for_master until its tick starts. Returns their names.
   */
  masterAnswers(minionsAfterMs = 0): string[] {
    const names: string[] = []
    for (const p of this.pollers) {
      const s = this.state.get(p.name)!
      if (!s.skippedForMaster) continue
      names.push(p.name)
      this.undefer(p.name)
      // Even a poller switched off since: its skipped tick was asked for (run-now said it would run once the master answers).
      if (!p.asksMinions || minionsAfterMs <= 0) void this.run(p.name)
      else
        this.deferred.set(p.name, setTimeout(() => {
          this.deferred.delete(p.name)
          // Not again when a scheduled tick ran meanwhile.
          if (s.skippedForMaster) void this.run(p.name)
        }, minionsAfterMs))
    }
    return names
  }

  /** Cancels a tick waiting for reconnecting minions. */
  private undefer(name: string) {
    clearTimeout(this.deferred.get(name))
    this.deferred.delete(name)
  }

  /** Stops every schedule and waits for running ticks. */
  async stop() {
    for (const n of [...this.deferred.keys()]) this.undefer(n)
    this.active.clear()
    for (const j of this.jobs.values()) j.stop()
    this.jobs.clear()
    await Promise.all(this.running.values())
  }

  /** Status of every poller for GET /api/admin/pollers. */
  status() {
    return this.pollers.map((p) => {
      const s = this.state.get(p.name)!
      const next = this.jobs.get(p.name)?.nextRun()
      return {
        name: p.name, enabled: p.intervalSeconds() > 0, interval_seconds: p.intervalSeconds(), running: this.running.has(p.name),
        last_started_at: isoOrNull(s.lastStart), last_duration_ms: s.lastDurationMs, last_error: s.lastError, runs: s.runs, errors: s.errors,
        items_processed: s.lastItems, next_run_at: next ? iso(next.getTime()) : null, waiting_for_master: s.skippedForMaster,
      }
    })
  }

  /** When each poller last succeeded, and its lag: seconds since then (null when it never did). */
  health(now: number) {
    return this.pollers.map((p) => {
      const s = this.state.get(p.name)!
      return { name: p.name, interval: p.intervalSeconds(), lastSuccess: s.lastSuccess, lagSeconds: s.lastSuccess === null ? null : Math.max(0, Math.round((now - s.lastSuccess) / 1000)), lastError: s.lastError }
    })
  }

  /** Counters of every poller for /metrics. */
  stats() {
    return this.pollers.map((p) => {
      const s = this.state.get(p.name)!
      return { name: p.name, runs: s.runs, errors: s.errors, totalMs: s.totalMs, lastDurationMs: s.lastDurationMs, waitingForMaster: s.skippedForMaster }
    })
  }
}
