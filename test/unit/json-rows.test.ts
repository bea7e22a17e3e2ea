/** JSON row sets for PostgreSQL: NULs become U+FFFD, escaped backslashes stay as they are. */
import { expect, test } from 'bun:test'
import { jsonRows } from '../../src/db/json-rows'

test('a NUL in a string becomes U+FFFD; a backslash followed by u0000 is text and stays', () => {
  const rows = [{ a: 'x\0y', b: '\\u0000', c: '\\\0', d: 'plain' }]
  const back = JSON.parse(jsonRows(rows))
  expect(back).toEqual([{ a: 'x\uFFFDy', b: '\\u0000', c: '\\\uFFFD', d: 'plain' }])
})

test('rows without a NUL are JSON.stringify as it is', () => {
  const rows = [{ n: 1, s: 'a"b\\c', t: null }]
  expect(jsonRows(rows)).toBe(JSON.stringify(rows))
})
