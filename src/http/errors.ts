/** Error types every route throws, and the 422 entry shape of contract §1.1. */

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

/** Shorthands for the errors the contract names. */
export const notAuthenticated = () => new AppError(401, 'Not authenticated')
export const forbidden = () => new AppError(403, 'Forbidden')
export const notFound = (thing: string) => new AppError(404, `${thing} not found`)
export const conflict = (detail: string) => new AppError(409, detail)

/** A cross-field rule broken by an otherwise valid body (`value_error`, loc ["body"]). */
export function valueError(sentence: string, input: unknown): ValidationFailed {
  return new ValidationFailed([{ type: 'value_error', loc: ['body'], msg: `Value error, ${sentence}`, input, ctx: { error: sentence } }])
}
