/**
 * Whether the salt-master answers, told apart from salt-api (contract §17): with the master stopped salt-api still
 * answers GET / but every call through the master (login included) hangs, so a cheap call with a short deadline that
 * fails while GET / answers is the master's fault.
 */
import type { SaltClient } from './client'

/** The master's state: `up` null while unknown (never checked, not configured, or salt-api itself does not answer). */
export interface MasterHealth {
  up: boolean | null
  /** When `up` last changed (for a master that stopped: when the first check that failed began). */
  since: number | null
  error: string | null
  /** When the master last answered again after not answering (the presence grace counts from here); null if never. */
  backAt: number | null
}

/** Checks the master on demand, one check at a time, and remembers what it found. */
export class MasterWatch {
  private s: MasterHealth = { up: null, since: null, error: null, backAt: null }
  /** The last state that was not unknown: a master down, then salt-api down, then both back, came back. */
  private lastKnown: boolean | null = null
  private checking: Promise<void> | null = null
  /** Told when the master starts or stops answering. */
  onChange: (up: boolean) => void = () => {}

  constructor(private client: SaltClient, private now: () => number, public timeoutMs = 15_000) {}

  /** The state now. */
  health(): MasterHealth {
    return { ...this.s }
  }

  /** Checks the master once (a check already running is shared). */
  check(): Promise<void> {
    this.checking ??= this.once().finally(() => (this.checking = null))
    return this.checking
  }

  private async once() {
    const started = this.now()
    let r: Awaited<ReturnType<SaltClient['masterAnswers']>>
    try {
      r = await this.client.masterAnswers(this.timeoutMs)
    } catch {
      return this.set(null, null, started) // not configured
    }
    if (r.up) this.set(true, null, this.now())
    else this.set(r.api ? false : null, r.api ? r.error : null, started)
  }

  private set(up: boolean | null, error: string | null, at: number) {
    if (this.s.up === up) {
      if (up === false) this.s.error = error
      return
    }
    const back = up === true && this.lastKnown === false
    this.s = { up, since: at, error, backAt: back ? at : this.s.backAt }
    if (up === null) return
    this.lastKnown = up
    this.onChange(up)
  }
}
