/**
 * Cookies at the HTTP edge: read from the request's Cookie header and written as Set-Cookie lines by the route layer
 * itself, with the `cookie` package (RFC 6265 parsing and serialising). Not Elysia's cookie jar: Elysia parses every
 * cookie of every request into proxied objects once a handler names its `cookie`, and ours names it on every route;
 * that was about 1 µs a request, a tenth of `/api/auth/me` (bench/RESULTS.md, session 15).
 */
import { parse, serialize } from 'cookie'

/** The session cookie's name, as the contract gives it. */
export const SESSION_COOKIE = 'saltdeck_session'

/** One cookie's value from the request; undefined when it is not there. */
export function requestCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie')
  // Most requests without a session (scripts, probes) send no Cookie header, and the rest one or two cookies.
  if (header === null || !header.includes(name)) return undefined
  return parse(header)[name]
}

/** A Set-Cookie line for an HttpOnly, SameSite=Lax cookie on path /, Secure when asked; max age 0 clears it. */
export function setCookieLine(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return serialize(name, value, { httpOnly: true, sameSite: 'lax', path: '/', maxAge: maxAgeSeconds, secure })
}
