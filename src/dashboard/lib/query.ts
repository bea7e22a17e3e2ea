/** Pure helpers for list state kept in the hash query (filters, paging), so links and Back restore a view. */

/** A query value as pages hand it to `href`/`navigate`: empty values are left out of the address. */
export type QueryValue = string | number | undefined | null

/** Reads an integer parameter, falling back to `def` when absent, malformed or outside [min, max]. */
export function intParam(query: URLSearchParams, name: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = query.get(name)
  if (raw === null || !/^\d+$/.test(raw)) return def
  const n = Number(raw)
  return n < min || n > max ? def : n
}

/** Reads a parameter that must be one of `allowed`; anything else is `def`. */
export function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], def: T | ''): T | '' {
  const raw = query.get(name)
  return raw !== null && (allowed as readonly string[]).includes(raw) ? (raw as T) : def
}

/** Reads a boolean flag written as `1`; absent is `def`, `0` is false. */
export function flagParam(query: URLSearchParams, name: string, def = false): boolean {
  const raw = query.get(name)
  return raw === null ? def : raw === '1'
}

/**
 * The current query with `changes` applied, as a plain record for `navigate`. A change to anything but the
 * offset sends the list back to its first page, because the old offset means nothing under a new filter.
 */
export function withChanges(query: URLSearchParams, changes: Record<string, QueryValue | boolean>, offsetKey = 'offset'): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of query) out[k] = v
  let resetOffset = false
  for (const [k, v] of Object.entries(changes)) {
    if (k !== offsetKey) resetOffset = true
    const s = typeof v === 'boolean' ? (v ? '1' : '0') : v === undefined || v === null ? '' : String(v)
    if (s === '') delete out[k]
    else out[k] = s
  }
  if (resetOffset && !(offsetKey in changes)) delete out[offsetKey]
  if (out[offsetKey] === '0') delete out[offsetKey]
  return out
}
