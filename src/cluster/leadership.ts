/**
 * Leadership of named work (each salt source, and `fleet` for fleet-wide work): one instance at a time holds a named
 * lock (a PostgreSQL session advisory lock; always granted on SQLite) and runs that work. Others retry every few
 * seconds; a holder checks its lock's connection as often and stops the work at once when it is gone.
 */

/** A held lock: whether its connection still holds it, and giving it back. */
export interface HeldLock {
  alive(): Promise<boolean>
  release(): Promise<void>
}

/** Tries to take a named lock without waiting: the held lock, or null when another instance holds it. */
export type TryLock = (name: string) => Promise<HeldLock | null>

/** What a leader runs: started on gaining the lock, stopped on losing it (or at stop). */
export interface LeaderWork {
  gained(): Promise<void> | void
  lost(): Promise<void> | void
}

/** Seconds between a non-leader's tries and a leader's checks: a dead leader is replaced well within 15 s. */
export const LEADERSHIP_TICK_MS = 3000

interface Seat {
  work: LeaderWork
  lock: HeldLock | null
  /** The work's start or stop under way, so a tick never overlaps it. */
  busy: Promise<void> | null
}

/** The leaderships one instance competes for. */
export class Leadership {
  private seats = new Map<string, Seat>()
  private timer: ReturnType<typeof setInterval> | null = null
  private ticking: Promise<void> | null = null
  /** Called after the set of names this instance leads changed (the heartbeat writes it at once). */
  onChange: () => void = () => {}

  constructor(private readonly tryLock: TryLock, private readonly log: { info(m: string, f?: object): void; warn(m: string, f?: object): void }, private readonly tickMs = LEADERSHIP_TICK_MS) {}

  /** Competes for `name`, running `work` while this instance holds it. */
  compete(name: string, work: LeaderWork) {
    this.seats.set(name, { work, lock: null, busy: null })
  }

  /** Stops competing for `name` (a salt source removed): its work stops if held here, and its lock is given back. */
  async withdraw(name: string) {
    await this.ticking
    const seat = this.seats.get(name)
    this.seats.delete(name)
    if (!seat?.lock) return
    await this.giveBack(name, seat)
    this.onChange()
  }

  /** Stops a held seat's work, then releases its lock for another instance. */
  private async giveBack(name: string, seat: Seat) {
    const lock = seat.lock!
    seat.lock = null
    await seat.work.lost()
    await lock.release().catch(() => {})
    this.log.info('leadership given back', { lead: name })
  }

  /** The names this instance leads now, sorted. */
  leads(): string[] {
    return [...this.seats].filter(([, s]) => s.lock).map(([n]) => n).sort()
  }

  /** Tries every seat now, then every tick. */
  async start() {
    await this.tick()
    this.timer ??= setInterval(() => void this.tick(), this.tickMs)
  }

  /** One round: a leader checks its lock, a non-leader tries to take one. Never two rounds at once. */
  tick(): Promise<void> {
    this.ticking ??= (async () => {
      for (const [name, seat] of this.seats) {
        try {
          if (seat.lock) {
            if (!(await seat.lock.alive())) await this.lose(name, seat, 'its database connection is gone')
          } else {
            const lock = await this.tryLock(name)
            if (lock) await this.gain(name, seat, lock)
          }
        } catch (e) {
          this.log.warn('leadership check failed', { lead: name, error: e instanceof Error ? e.message : String(e) })
        }
      }
    })().finally(() => (this.ticking = null))
    return this.ticking
  }

  private async gain(name: string, seat: Seat, lock: HeldLock) {
    seat.lock = lock
    this.log.info('leading', { lead: name })
    this.onChange()
    seat.busy = Promise.resolve(seat.work.gained())
    await seat.busy.finally(() => (seat.busy = null))
  }

  private async lose(name: string, seat: Seat, why: string) {
    const lock = seat.lock
    seat.lock = null
    this.log.warn('leadership lost: its work stops', { lead: name, reason: why })
    this.onChange()
    seat.busy = Promise.resolve(seat.work.lost())
    await seat.busy.finally(() => (seat.busy = null))
    await lock?.release().catch(() => {})
  }

  /** Stops competing: the work of every seat held stops, then its lock is given back for another instance. */
  async stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.ticking
    for (const [name, seat] of this.seats) if (seat.lock) await this.giveBack(name, seat)
    this.onChange()
  }
}

/** SQLite's locks: one instance per data directory (the serve lock), so it always leads. */
export const alwaysGranted: TryLock = async () => ({ alive: async () => true, release: async () => {} })
