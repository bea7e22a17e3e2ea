/** The route layer's own cookie reading and Set-Cookie lines (http/cookies.ts), in place of Elysia's jar. */
import { expect, test } from 'bun:test'
import { requestCookie, SESSION_COOKIE, setCookieLine } from '../../src/http/cookies'

const req = (cookie?: string) => new Request('http://localhost/api/auth/me', { headers: cookie === undefined ? {} : { cookie } })

test('reads one cookie by its exact name, decoded, whatever else the header holds', () => {
  expect(requestCookie(req(), SESSION_COOKIE)).toBeUndefined()
  expect(requestCookie(req('theme=dark'), SESSION_COOKIE)).toBeUndefined()
  expect(requestCookie(req('saltdeck_session=abc_DEF-123'), SESSION_COOKIE)).toBe('abc_DEF-123')
  // A cookie whose name ends with ours is another cookie.
  expect(requestCookie(req('x_saltdeck_session=evil; saltdeck_session=good'), SESSION_COOKIE)).toBe('good')
  expect(requestCookie(req('x_saltdeck_session=evil'), SESSION_COOKIE)).toBeUndefined()
  expect(requestCookie(req('a=1;  saltdeck_oidc=%7B%22s%22%3A1%7D ; b=2'), 'saltdeck_oidc')).toBe('{"s":1}')
  // A value that looks like a number stays the string it was (Elysia's jar turned such a value into a number).
  expect(requestCookie(req('saltdeck_session=12345'), SESSION_COOKIE)).toBe('12345')
})

test('a Set-Cookie line carries the contract flags; Secure only when asked; max age 0 clears', () => {
  const line = setCookieLine(SESSION_COOKIE, 'tok', 28800, false)
  expect(line).toStartWith('saltdeck_session=tok;')
  for (const flag of ['Max-Age=28800', 'Path=/', 'HttpOnly', 'SameSite=Lax']) expect(line).toContain(flag)
  expect(line).not.toContain('Secure')
  expect(setCookieLine(SESSION_COOKIE, 'tok', 60, true)).toContain('; Secure')
  expect(setCookieLine(SESSION_COOKIE, '', 0, false)).toStartWith('saltdeck_session=; Max-Age=0;')
})
