// Proves scanPkgAnswer reads a pkg.list_pkgs answer from bytes exactly as JSON.parse + parsePkgList would, for the
// recorded answers, for hostile and unusual values, and for random answers mixing fast-path and fallback shapes.
import { describe, expect, test } from 'bun:test'
import { PackageCatalog } from '../../src/features/inventory/catalog'
import { PkgAnswerScanner, parsePkgList, scanPkgAnswer } from '../../src/features/inventory/pkg-scan'
import { fixture } from '../helpers/fixtures'

const enc = new TextEncoder()

/** The answer's bytes fed to a scanner in chunks cut at the given offsets. */
function chunked(bytes: Uint8Array, cuts: number[], cat: PackageCatalog) {
  const s = new PkgAnswerScanner(cat, 1) // scan after every chunk, so every cut lands inside an item
  let at = 0
  for (const c of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) s.push(bytes.subarray(at, (at = c)))
  return s.end()
}

/** minion → sorted "name version arch" rows (null: not a package list), the way the scanner resolved them. */
function viaScan(text: string, cuts?: number[]) {
  const cat = new PackageCatalog()
  const out: Record<string, string[] | null> = {}
  const bytes = enc.encode(text)
  for (const [m, keys] of cuts ? chunked(bytes, cuts, cat) : scanPkgAnswer(bytes, cat))
    out[m] = keys && [...new Set(Array.from(keys, (k) => `${cat.nameOf[cat.keyName[k]!]} ${cat.versionOf[k]} ${cat.archOf[k]}`))].sort()
  return out
}
/** The same from JSON.parse and parsePkgList. */
function viaParse(text: string) {
  const ret = (JSON.parse(text) as { return: unknown[] }).return[0]
  const out: Record<string, string[] | null> = {}
  if (!ret || typeof ret !== 'object' || Array.isArray(ret)) return out // no minion answered with a package list
  for (const [m, v] of Object.entries(ret)) {
    const list = parsePkgList(v)
    out[m] = list && [...new Set(list.map((p) => `${p.name} ${p.version} ${p.arch ?? ''}`))].sort()
  }
  return out
}
/** The scanner agrees with JSON.parse, on the whole answer and fed in 1-byte, 7-byte and random chunks. */
function same(text: string) {
  const want = viaParse(text)
  expect(viaScan(text)).toEqual(want)
  const n = enc.encode(text).length
  // Every minion cut at every byte rescans it once per byte: only for the small answers.
  if (n < 5000) expect(viaScan(text, Array.from({ length: n }, (_, i) => i))).toEqual(want)
  expect(viaScan(text, Array.from({ length: n / 7 }, (_, i) => i * 7 + (n % 7)))).toEqual(want)
  expect(viaScan(text, Array.from({ length: 5 }, () => Math.floor(Math.random() * n)))).toEqual(want)
}

describe('scanPkgAnswer', () => {
  test('the recorded answers (versions_as_list, several minions, attr=version,arch)', () => {
    for (const f of ['local-pkg.list_pkgs.json', 'local-pkg.list_pkgs-all.json', 'local-pkg.list_pkgs-attr.json'])
      same(JSON.stringify(fixture(f).response))
    // Three recorded fleets, each scanned chunk by chunk: seconds on a loaded 2-core machine.
  }, 30_000)

  test.each([
    ['lists and spacing', '{ "return" : [ { "a" : { "bash" : [ "5.2" , "5.1" ] , "zsh":["5.9"] } , "b":{} } ] }'],
    ['comma-joined strings with empty parts', '{"return": [{"a": {"k": "1,,2,", "e": "", "l": []}}]}'],
    ['{version, arch} objects', '{"return": [{"a": {"libc6": [{"version": "2.36", "arch": "amd64"}, {"version": "2.36", "arch": "i386"}], "x": {"version": "1"}}}]}'],
    ['yumpkg attr objects', '{"return": [{"a": {"openssl-libs": [{"epoch": "1", "version": "3.0.7", "release": "27.el9", "arch": "x86_64"}], "glibc": [{"epoch": "", "version": "2.34", "release": "100.el9", "arch": "i686"}]}}]}'],
    ['escapes and non-ASCII', '{"return": [{"a\\u0041": {"caf\\u00e9": ["1\\"2"], "naïve": ["ü"], "tab\\t": ["1"]}}]}'],
    ['a duplicate name keeps the last value', '{"return": [{"a": {"bash": ["1"], "zsh": ["2"], "bash": ["3"]}}]}'],
    ['a duplicate minion keeps the last value', '{"return": [{"a": {"bash": ["1"]}, "b": {}, "a": {"zsh": ["2"]}}]}'],
    ['error strings, false, numbers, null items', '{"return": [{"a": "Minion did not return. [No response]", "b": false, "c": {"k": [1, null, "2", true, {}]}, "d": {"n": null, "o": 5}}]}'],
    ['more return elements and an empty answer', '{"return": [{"a": {"k": ["1"]}}, {"ignored": [1, {"x": "]}"}]}]}'],
    ['nothing matched', '{"return": [{}]}'],
    ['return[0] not an object', '{"return": ["error text"]}'],
    ['another outer shape', '{"other": 1, "return": [{"a": {"k": ["1"]}}]}'],
    ['an empty name and the arch separator byte in text', '{"return": [{"a": {"": ["1"], "k": ["1\\u00ff2"]}}]}'],
    ['a second return key wins', '{"return": [{"a": {"k": ["1"]}}], "x": {"y": [1]}, "return": [{"b": {"z": "2"}}]}'],
    ['numbers and literals at the end of values', '{"return": [{"a": 5, "b": true, "c": {"k": "1"}}, 7, null]}'],
  ])('%s', (_label, text) => same(text))

  test.each([
    ['truncated', '{"return": [{"a": {"k": ["1"'],
    ['trailing comma in a list', '{"return": [{"a": {"k": ["1",]}}]}'],
    ['trailing comma in an object', '{"return": [{"a": {"k": ["1"],}}]}'],
    ['garbage after the answer', '{"return": [{"a": {}}]} x'],
    ['raw control character in a minion id', '{"return": [{"a\tb": {}}]}'],
    ['bad later element', '{"return": [{"a": {}}, {"x" "y"}]}'],
    ['empty', ''],
  ])('malformed JSON fails as JSON.parse does: %s', (_label, text) => {
    expect(() => JSON.parse(text)).toThrow()
    expect(() => scanPkgAnswer(enc.encode(text), new PackageCatalog())).toThrow(SyntaxError)
    expect(() => chunked(enc.encode(text), [3, 9, 20], new PackageCatalog())).toThrow(SyntaxError)
  })

  test.each(['{}', '{"return": null}', '{"other": 1}'])('an answer without a return list is unreadable: %s', (text) => {
    expect(() => scanPkgAnswer(enc.encode(text), new PackageCatalog())).toThrow(SyntaxError)
  })

  test('random answers mixing every shape equal JSON.parse + parsePkgList', () => {
    let seed = 99
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) | 0) >>> 0) / 2 ** 32
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!
    const NAMES = ['bash', 'libc6', 'zsh', 'caf\u00e9', 'q"uote', 'back\\slash', '', 'a,b']
    const VERS = ['1.0', '2.0-1', '', '1,2', 'v\u00fc', 'x"y', '3.0']
    const ws = () => pick(['', ' ', '\n  ', '\t'])
    const value = (): string => {
      const r = rnd()
      if (r < 0.5) return `[${Array.from({ length: Math.floor(rnd() * 3) }, () => ws() + JSON.stringify(pick(VERS)) + ws()).join(',')}]`
      if (r < 0.7) return JSON.stringify(pick(VERS))
      if (r < 0.85) return JSON.stringify([{ version: pick(VERS), arch: pick(['amd64', '', 'i386']) }])
      return pick(['null', '7', '{}', '[null]', 'true'])
    }
    for (let n = 0; n < 300; n++) {
      const minions = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => {
        const v = rnd() < 0.1 ? pick(['"No response"', 'false', '[]']) : `{${Array.from({ length: Math.floor(rnd() * 6) }, () => `${ws()}${JSON.stringify(pick(NAMES))}${ws()}:${ws()}${value()}`).join(',')}${ws()}}`
        return `${JSON.stringify(pick(['m1', 'm2', 'm3', 'm\u00e94']))}:${ws()}${v}`
      })
      same(`{"return":${ws()}[{${minions.join(',' + ws())}}]}`)
    }
  })
})

test("parsePkgList: yumpkg's attr objects (fields apart) become salt's own version text, epoch:version-release, with the arch", () => {
  expect(parsePkgList({
    'openssl-libs': [{ epoch: '1', version: '3.0.7', release: '27.el9', arch: 'x86_64' }],
    glibc: [{ epoch: '', version: '2.34', release: '100.el9', arch: 'i686' }],
    'gpg-pubkey': [{ version: '3228467c', release: '613798eb', arch: 'noarch' }],
    libc6: [{ version: '2.36', arch: 'amd64' }],
  })).toEqual([
    { name: 'openssl-libs', version: '1:3.0.7-27.el9', arch: 'x86_64' },
    { name: 'glibc', version: '2.34-100.el9', arch: 'i686' },
    { name: 'gpg-pubkey', version: '3228467c-613798eb', arch: 'noarch' },
    { name: 'libc6', version: '2.36', arch: 'amd64' },
  ])
})
