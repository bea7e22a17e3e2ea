/** The HTTP edge's errors: AppError for routes, the 422 entry shape of contract §1.1, and the one map from domain errors to statuses. */
import { Conflict, Forbidden, Invalid, NotFound, Throttled, Unauthenticated } from '../lib/errors'
import { SaltMasterDown, SaltNotConfigured, SaltRejected, SaltUnavailable } from '../salt/errors'
import { isWriteFailure, NOT_WRITABLE } from '../db/writable'

/** A non-validation error answered as `{"detail": "<sentence>"}` with its status. */
export class AppError extends Error {
  constructor(readonly status: number, readonly detail: string, readonly headers: Record<string, string> = {}) {
    super(detail)
  }
}

/** One pydantic-style problem of a request. */
export interface ErrorEntry {
  type: string
  loc: (string | number)[]
  msg: string
  input?: unknown
  ctx?: Record<string, unknown>
}

/** A request that failed validation: answered 422 with every problem at once. */
export class ValidationFailed extends Error {
  constructor(readonly entries: ErrorEntry[]) {
    super('validation failed')
  }
}

/**
 * A rule a validator adds (`value_error`): as FastAPI answers a pydantic validator's ValueError, whose ctx.error is
 * the exception object serialised as `{}`. `input` is left out when undefined (a secret field).
 */
export function valueErrorEntry(loc: (string | number)[], sentence: string, input?: unknown): ErrorEntry {
  return { type: 'value_error', loc, msg: `Value error, ${sentence}`, ...(input === undefined ? {} : { input }), ctx: { error: {} } }
}

/** A cross-field rule broken by an otherwise valid body (`value_error`, loc ["body"]). */
export function valueError(sentence: string, input: unknown): ValidationFailed {
  return new ValidationFailed([valueErrorEntry(['body'], sentence, input)])
}

/**
 * A service's refusal (lib/errors.ts `Invalid`) as the 422 of contract §1.1: each field under the request part it came
 * from, which the route knows (`partOf`) and the service does not.
 */
export function refusalEntries(e: Invalid, partOf: (field: string | number) => string): ValidationFailed {
  return new ValidationFailed(e.refusals.map((r) => valueErrorEntry([partOf(r.field[0]!), ...r.field], r.sentence, r.value)))
}

/** The contract's answer to a domain or salt error; null for anything else (a bug: 500). */
export function httpError(e: unknown): AppError | null {
  if (e instanceof AppError) return e
  if (e instanceof NotFound) return new AppError(404, e.message)
  if (e instanceof Conflict) return new AppError(409, e.message)
  if (e instanceof Unauthenticated) return new AppError(401, e.message)
  if (e instanceof Forbidden) return new AppError(403, e.message)
  if (e instanceof Throttled) return new AppError(429, e.message, { 'Retry-After': String(e.retryAfterSeconds) })
  if (e instanceof SaltNotConfigured || e instanceof SaltUnavailable || e instanceof SaltMasterDown) return new AppError(503, e.detail)
  if (e instanceof SaltRejected) return new AppError(502, e.detail)
  // The disk is full, read-only or failing: not a bug of the request, and it passes (contract §17).
  if (isWriteFailure(e)) return new AppError(503, NOT_WRITABLE)
  return null
}
