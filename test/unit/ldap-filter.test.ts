// RFC 4515 escaping of values put into LDAP filters.
import { expect, test } from 'bun:test'
import { escapeFilterValue, renderFilter } from '../../src/features/identity/ldap-filter'

test('escapeFilterValue escapes *, (, ), \\ and NUL as RFC 4515 §3 says, and nothing else', () => {
  expect(escapeFilterValue('*)(uid=*')).toBe('\\2a\\29\\28uid=\\2a')
  expect(escapeFilterValue('a\\b\u0000c')).toBe('a\\5cb\\00c')
  expect(escapeFilterValue('José.o\'Brien@ex-1')).toBe('José.o\'Brien@ex-1')
})

test('renderFilter fills every placeholder escaped and leaves unknown ones alone', () => {
  expect(renderFilter('(&(objectClass=person)(|(uid={username})(mail={username})))', { username: 'a*' })).toBe('(&(objectClass=person)(|(uid=a\\2a)(mail=a\\2a)))')
  expect(renderFilter('(member={dn})', { dn: 'cn=x\\,y (z),dc=o' })).toBe('(member=cn=x\\5c,y \\28z\\29,dc=o)')
  expect(renderFilter('(uid={other})', { username: 'a' })).toBe('(uid={other})')
})
