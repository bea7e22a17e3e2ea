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
