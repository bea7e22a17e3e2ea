/**
 * Domain errors the services throw: plain classes that know nothing of HTTP. The HTTP edge (http/errors.ts) maps each
 * to the contract's status in one place.
 */

/** A record that does not exist: `<Thing> not found`. */
export class NotFound extends Error {
  constructor(readonly thing: string, message = `${thing} not found`) {
    super(message)
  }
}

/** A uniqueness or protected-record conflict, or work that is already running; the message is the sentence shown. */
export class Conflict extends Error {}

/** A poller asked to run while its tick runs. */
export class PollerBusy extends Conflict {
  constructor() {
    super('Poller already running')
  }
}

/** An inventory refresh asked for while one runs. */
export class RefreshBusy extends Conflict {
  constructor() {
    super('Inventory refresh already running')
  }
}

/** No valid credentials: `Not authenticated`, or the sentence given (`Invalid credentials`). */
export class Unauthenticated extends Error {
  constructor(message = 'Not authenticated') {
    super(message)
  }
}

/** Authenticated but not allowed: `Forbidden`, or the sentence given. */
export class Forbidden extends Error {
  constructor(message = 'Forbidden') {
    super(message)
  }
}

/** Too many attempts; retry after this many seconds. */
export class Throttled extends Error {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message)
  }
}

/** One value a service refuses: where it sits in what the service was given (`['channel_ids', 2]`), why, and the value (left out for a secret). */
export interface Refusal {
  field: (string | number)[]
  sentence: string
  value?: unknown
}

/**
 * Values that break a rule only a service can judge (an unknown id, a URL still holding its mask, a field a setting
 * needs). It names fields, not request parts: the HTTP edge answers it as one 422 listing each, under the part of the
 * request the field came from.
 */
export class Invalid extends Error {
  constructor(readonly refusals: Refusal[]) {
    super(refusals.map((r) => `${r.field.join('.')}: ${r.sentence}`).join('; '))
  }
}

/** One refused value as an Invalid. */
export const invalid = (field: (string | number)[], sentence: string, value?: unknown) => new Invalid([{ field, sentence, value }])
