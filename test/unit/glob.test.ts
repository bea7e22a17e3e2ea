// Proves globMatch, the whole-value matcher (* and ?; every other character literal) of role grants and inventory targets.
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { globCanMatchPrefix, globMatch, saltGlobMatch, sqliteGlob } from '../../src/lib/glob'

test.each([
  ['*', 'anything', true], ['view', 'view', true], ['view', 'viewer', false], ['key:*', 'key:web-01', true], ['key:*', 'minion:*', false],
  ['?iew', 'view', true], ['a.b', 'axb', false], ['job:*', 'job:*', true],
])('globMatch(%p, %p) is %p', (g, v, want) => expect(globMatch(g, v)).toBe(want))

// sqliteGlob: salt's glob (Python fnmatch) as an SQLite GLOB pattern. The expected matches are what Python 3.11's
// fnmatch.fnmatchcase answers for each pattern over NAMES (computed once with python3 and written down here).
const NAMES = ['web-01', 'web-02', 'web-1', '[', 'a[', ']', 'a', '^', '-', 'b', 'x', 'z', '_', 'ax', "it's-01", '%_x', '*', 'web-0x', '[x', 'c', 'd', 'e', '.', '/', ',', '\\']
const db = new Database(':memory:')
const glob = db.query<{ m: number }, [string, string]>('SELECT ?1 GLOB ?2 AS m')

const FNMATCH = [
    ["web*", ["web-01", "web-02", "web-1", "web-0x"]],
    ["web-0?", ["web-01", "web-02", "web-0x"]],
    ["web-0[12]", ["web-01", "web-02"]],
    ["web-0[!1]", ["web-02", "web-0x"]],
    ["[", ["["]],
    ["a[", ["a["]],
    ["[]]", ["]"]],
    ["[]a]", ["]", "a"]],
    ["[!]]", ["[", "a", "^", "-", "b", "x", "z", "_", "*", "c", "d", "e", ".", "/", ",", "\\"]],
    ["[^a]", ["a", "^"]],
    ["[a^]", ["a", "^"]],
    ["[^]", ["^"]],
    ["[-]", ["-"]],
    ["[a-]", ["a", "-"]],
    ["[-a]", ["a", "-"]],
    ["[!-]", ["[", "]", "a", "^", "b", "x", "z", "_", "*", "c", "d", "e", ".", "/", ",", "\\"]],
    ["[z-a]", []],
    ["[!z-a]x", ["ax", "[x"]],
    ["[]-a]", ["]", "a", "^", "_"]],
    ["[a-^]", []],
    ["[!^]", ["[", "]", "a", "-", "b", "x", "z", "_", "*", "c", "d", "e", ".", "/", ",", "\\"]],
    ["*[*]*", ["*"]],
    ["it's*", ["it's-01"]],
    ["%_*", ["%_x"]],
    ["web-0[0-9]", ["web-01", "web-02"]],
    ["[[]*", ["[", "[x"]],
    ["[a-c-e]", ["a", "-", "b", "c", "e"]],
    ["[--/]", ["-", ".", "/"]],
    ["[^-]", ["^", "-"]],
  ] as [string, string[]][]
test.each(FNMATCH)('SQLite GLOB of sqliteGlob(%p) matches what fnmatch matches', (pattern, want) => {
  const g = sqliteGlob(pattern)
  expect(NAMES.filter((n) => g !== null && glob.get(n, g)!.m === 1)).toEqual(want)
})

test('sqliteGlob: an empty class matches nothing, an unclosed [ is literal, ] and quotes pass through', () => {
  expect(sqliteGlob('[z-a]')).toBeNull()
  expect(sqliteGlob('web[')).toBe('web[[]')
  expect(sqliteGlob("o'neil]*")).toBe("o'neil]*")
})

test('sqliteGlob: many stars against a long id answer at once (SQLite gives up a failed star early)', () => {
  const t = performance.now()
  expect(glob.get('a'.repeat(250), sqliteGlob('*a'.repeat(60) + '*b')!)!.m).toBe(0)
  expect(performance.now() - t).toBeLessThan(200)
})

// saltGlobMatch: the target_glob of scoped grants (contract §14), salt's glob on minion ids, against the same table.
test.each(FNMATCH)('saltGlobMatch(%p) matches what fnmatch matches', (pattern, want) => {
  expect(NAMES.filter((n) => saltGlobMatch(pattern, n))).toEqual(want)
})

test('saltGlobMatch: many stars against a long id answer at once (no exponential backtracking)', () => {
  const t = performance.now()
  expect(saltGlobMatch('*a'.repeat(60) + '*b', 'a'.repeat(250))).toBe(false)
  expect(saltGlobMatch('*a'.repeat(60) + '*b', 'a'.repeat(250) + 'b')).toBe(true)
  expect(performance.now() - t).toBeLessThan(200)
})

test.each([
  ['*', 'salt:', true], ['salt:*', 'salt:', true], ['salt:test.*', 'salt:', true], ['s?lt:x', 'salt:', true], ['sa*', 'salt:', true],
  ['salt', 'salt:', false], ['key:*', 'salt:', false], ['*:test.*', 'salt:', true], ['', 'salt:', false],
])('globCanMatchPrefix(%p, %p) is %p', (g, p, want) => expect(globCanMatchPrefix(g, p)).toBe(want))
