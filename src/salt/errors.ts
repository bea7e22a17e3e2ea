/** What can go wrong talking to salt-api, as plain errors; the HTTP edge maps them to the contract's 502/503. */

/** salt-api is not configured (no URL, username or password). */
export class SaltNotConfigured extends Error {
  readonly detail = 'Salt API not configured'
  constructor() {
    super('Salt API not configured')
  }
}

/** salt-api cannot be reached, timed out or said it is unavailable (`httpStatus` 503/504); `reason` says which. */
export class SaltUnavailable extends Error {
  readonly detail = 'Salt API unavailable'
  constructor(readonly reason: string, readonly httpStatus: number | null = null) {
    super('Salt API unavailable')
  }
}

/** Work that asks the salt-master was not started: salt-api answers but the master does not (contract §17). */
export class SaltMasterDown extends Error {
  constructor(readonly detail: string) {
    super(detail)
  }
}

/** salt-api answered with an error; `reason` is its short human text. */
export class SaltRejected extends Error {
  readonly detail: string
  constructor(readonly reason: string, readonly httpStatus: number) {
    super(`Salt API error: ${reason}`)
    this.detail = this.message
  }
}

/** Any of the three. */
export type SaltError = SaltNotConfigured | SaltUnavailable | SaltRejected

/** True for an error of the salt client. */
export const isSaltError = (e: unknown): e is SaltError => e instanceof SaltNotConfigured || e instanceof SaltUnavailable || e instanceof SaltRejected

/** The sentence an operator sees for an error: a salt error's detail, else the message. */
export const errorText = (e: unknown): string => (isSaltError(e) ? e.detail : e instanceof Error ? e.message : String(e))
