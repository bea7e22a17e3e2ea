/** The audit page's address filters: what is read from `#/audit?...` and what is sent to GET /api/audit. */
import { expect, test } from 'bun:test'
import { auditFilters, auditParams, MAX_SINCE_MINUTES } from '../../src/dashboard/lib/audit-query'

const read = (s: string) => auditFilters(new URLSearchParams(s))

test('an empty address is the first page of everything', () => {
  expect(read('')).toEqual({ user: '', action: '', since: undefined, offset: 0 })
  expect(auditParams(read(''), 50)).toEqual({ user: undefined, action: undefined, since_minutes: undefined, limit: 50, offset: 0 })
})

test('filters and offset are read and passed on', () => {
  const f = read('user=admin&action=auth.login&since=60&offset=100')
  expect(f).toEqual({ user: 'admin', action: 'auth.login', since: 60, offset: 100 })
  expect(auditParams(f, 50)).toEqual({ user: 'admin', action: 'auth.login', since_minutes: 60, limit: 50, offset: 100 })
})

test('values the API would refuse are dropped', () => {
  expect(read('since=0').since).toBeUndefined()
  expect(read(`since=${MAX_SINCE_MINUTES + 1}`).since).toBeUndefined()
  expect(read(`since=${MAX_SINCE_MINUTES}`).since).toBe(MAX_SINCE_MINUTES)
  expect(read('since=abc').since).toBeUndefined()
  expect(read('since=1.5').since).toBeUndefined()
  expect(read('offset=-5').offset).toBe(0)
  expect(read('offset=x').offset).toBe(0)
  expect(read(`user=${'a'.repeat(100)}`).user).toHaveLength(64)
})

test('blank text filters are not sent', () => {
  expect(auditParams(read('user=%20%20&action='), 10).user).toBeUndefined()
})
