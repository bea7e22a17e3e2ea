// Proves globMatch, the whole-value matcher (* and ?; every other character literal) of role grants and inventory targets.
import { expect, test } from 'bun:test'
import { globMatch } from '../../src/lib/glob'

test.each([
  ['*', 'anything', true], ['view', 'view', true], ['view', 'viewer', false], ['key:*', 'key:web-01', true], ['key:*', 'minion:*', false],
  ['?iew', 'view', true], ['a.b', 'axb', false], ['job:*', 'job:*', true],
])('globMatch(%p, %p) is %p', (g, v, want) => expect(globMatch(g, v)).toBe(want))
