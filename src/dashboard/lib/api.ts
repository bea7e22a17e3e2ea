/** The dashboard's JSON client for the Saltdeck API: same-origin, cookie session, errors as ApiError. */

/** A failed API call: the HTTP status and the contract's `detail` (a string, or 422 entries). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly detail: unknown) {
    super(typeof detail === 'string' ? detail : describeDetail(detail, status))
  }
}

/** Turns a 422 detail list into one readable line. */
function describeDetail(detail: unknown, status: number): string {
  if (Array.isArray(detail)) {
    return detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).slice(1).join('.') || 'request'}: ${d.msg ?? 'invalid'}`).join('; ')
  }
  return `Request failed (${status})`
}

/** Listeners told when any call answers 401 (session gone) or 403 "Password change required". */
const authListeners = new Set<(status: number, detail: unknown) => void>()
/** Subscribes to session-level failures; returns the unsubscribe function. */
export function onAuthFailure(fn: (status: number, detail: unknown) => void) {
  authListeners.add(fn)
  return () => authListeners.delete(fn)
}

/** Builds a query string, leaving out empty values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const u = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v))
  const s = u.toString()
  return s ? `?${s}` : ''
}

/** What a page says when Saltdeck does not answer at all (the browser's own words are "Failed to fetch"). */
export const UNREACHABLE = 'Saltdeck is not answering: the service is stopped or restarting, or the network is down.'

/** fetch(), with a network failure (no answer at all) as an ApiError of status 0 that says so in words. */
async function reach(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init)
  } catch (e) {
    if (e instanceof TypeError) throw new ApiError(0, UNREACHABLE)
    throw e
  }
}

/** Calls the API; resolves with the parsed JSON body (undefined for 204), rejects with ApiError. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  // A JSON content type on every write is what the cookie CSRF check asks for (contract §3).
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json' } }
  if (body !== undefined || method !== 'GET') {
    init.headers = { ...init.headers, 'content-type': 'application/json' }
    if (body !== undefined) init.body = JSON.stringify(body)
  }
  return answer<T>(await reach(path, init))
}

/** POSTs a file as it is (an upload route names the media types it takes); resolves or rejects as api() does. */
export async function upload<T = unknown>(path: string, file: Blob, type: string): Promise<T> {
  return answer<T>(await reach(path, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json', 'content-type': type }, body: file }))
}

/** Reads an API answer: the parsed JSON body (undefined for 204), or an ApiError. */
async function answer<T>(res: Response): Promise<T> {
  if (res.status === 204) return undefined as T
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  if (!res.ok) {
    const detail = (parsed as { detail?: unknown } | undefined)?.detail ?? `Request failed (${res.status})`
    if (res.status === 401 || (res.status === 403 && detail === 'Password change required')) for (const fn of authListeners) fn(res.status, detail)
    throw new ApiError(res.status, detail)
  }
  return parsed as T
}
