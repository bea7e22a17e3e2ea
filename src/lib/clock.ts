/** Time source injected everywhere so tests never wait on the real clock. */
export interface Clock {
  now(): number
}

/** The real wall clock in epoch milliseconds. */
export const systemClock: Clock = { now: () => Date.now() }

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(public t = Date.parse('2026-11-21T08:00:00.000Z')) {}
  now() {
    return this.t
  }
  advance(ms: number) {
    this.t += ms
  }
}

/** Epoch ms to the contract's RFC 3339 form (`2026-11-21T07:40:00.123Z`). */
export const iso = (ms: number) => new Date(ms).toISOString()

/** Epoch ms to RFC 3339, passing null through. */
export const isoOrNull = (ms: number | null | undefined) => (ms == null ? null : iso(ms))
