// Proves compareDpkg and compareRpm order versions exactly as the real tools do: thousands of seeded random pairs (and
// this host's installed package versions) are compared by `dpkg --compare-versions` and by rpm 4.18's own Lua bindings
// (rpm.ver objects compare with rpmverCmp, rpm.vercmp is rpmvercmp), and every answer must match ours.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compareDpkg, compareNatural, compareRpm, compareVersions } from '../../src/lib/version-order'

type Pair = [string, string]

/** mulberry32: a tiny seeded PRNG, so every run checks the same pairs and a failure can be replayed. */
function prng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Rng = ReturnType<typeof prng>
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
const int = (r: Rng, n: number) => Math.floor(r() * n)

/** A digit run: mostly short, sometimes zero-padded, sometimes far beyond 64 bits. */
function digits(r: Rng): string {
  const x = r()
  if (x < 0.08) return '0'.repeat(1 + int(r, 3)) + String(int(r, 20))
  if (x < 0.14) return Array.from({ length: 20 + int(r, 25) }, (_, i) => (i === 0 ? 1 + int(r, 9) : int(r, 10))).join('')
  if (x < 0.2) return '0'
  return String(int(r, x < 0.6 ? 10 : 300))
}

const LETTERS = ['a', 'b', 'z', 'A', 'Z', 'rc', 'beta', 'alpha', 'git', 'p', 'dfsg', 'deb', 'ubuntu', 'el', 'fc', 'B']

/** A run of pieces drawn from `seps` and letters between digit runs; `seps` decides which separators may appear. */
function body(r: Rng, seps: readonly string[], maxPieces: number): string {
  let s = digits(r)
  const n = int(r, maxPieces + 1)
  for (let i = 0; i < n; i++) {
    const x = r()
    if (x < 0.45) s += pick(r, seps) + digits(r)
    else if (x < 0.65) s += pick(r, LETTERS)
    else if (x < 0.8) s += pick(r, seps) + pick(r, LETTERS)
    else if (x < 0.9) s += pick(r, seps) + pick(r, seps) // empty segments, doubled '~', '.~', '+.'
    else s += digits(r)
  }
  return s
}

// dpkg: upstream may hold '.', '+', '~', '-' (when a revision follows) and ':' (when an epoch precedes); a revision '.', '+', '~'.
const EPOCHS = ['0', '1', '2', '9', '10', '00', '01', '123']

/** A version dpkg accepts without complaint: digit-led upstream, allowed characters only, never an empty part. */
function dpkgVersion(r: Rng): string {
  const epoch = r() < 0.3 ? pick(r, EPOCHS) : null
  const revision = r() < 0.55 ? (r() < 0.15 ? pick(r, LETTERS) : body(r, ['.', '+', '~'], 3)) : null
  const seps = ['.', '.', '.', '+', '~', ...(revision !== null ? ['-'] : []), ...(epoch !== null ? [':'] : [])]
  let up = body(r, seps, 6)
  if (r() < 0.15) up += '~' + (r() < 0.5 ? '~' : '') // trailing (double) tilde
  if (up.endsWith('-')) up += '0'
  return (epoch !== null ? epoch + ':' : '') + up + (revision !== null ? '-' + revision : '')
}

/** A small edit of `v` (or `v` itself), so that many pairs sit right at the interesting boundaries. */
function nearby(r: Rng, v: string, extra: readonly string[]): string {
  switch (int(r, 12)) {
    case 0: return v + '~' + pick(r, ['', '~', 'rc1', '1'])
    case 1: return v + pick(r, ['.0', '0', '+1', '.a', 'a', '.00'])
    case 2: return v.replace(/\d+/, (d) => '0' + d)
    case 3: return v.replace(/\d+(?!.*\d)/, (d) => String(BigInt(d) + 1n))
    case 4: return v.includes(':') ? v.slice(v.indexOf(':') + 1) : '0:' + v
    case 5: return v.replace(/[a-z]/, (c) => c.toUpperCase())
    case 6: return v.replace(/[.+]/, () => pick(r, ['.', '+', '~', ...extra]))
    case 7: return v.slice(0, Math.max(1, v.length - 1 - int(r, 3)))
    case 8: return v
    case 9: return v.replace(/\d+$/, (d) => d + '0')
    case 10: return v + pick(r, extra)
    default: return v.replace(/~/, '')
  }
}

// rpm: any non-alphanumeric is a separator except '~' and '^'; ':' only counts after a leading digit run, '-' cuts the release.
const RPM_SEPS = ['.', '.', '.', '_', '+', '~', '^', '^', '~', '%', ',', '=']

/** An rpm EVR: optional epoch (sometimes empty), version with every kind of separator, optional (sometimes empty) release. */
function rpmVersion(r: Rng): string {
  const epoch = r() < 0.3 ? pick(r, [...EPOCHS, '']) : null
  const x = r()
  const release = x < 0.4 ? null : x < 0.45 ? '' : body(r, RPM_SEPS, 3)
  // A '-' inside the version is only a separator when a release follows (the last '-' cuts the release off).
  const seps = release !== null ? [...RPM_SEPS, '-'] : RPM_SEPS
  const version = r() < 0.1 ? pick(r, LETTERS) + body(r, seps, 4) : body(r, seps, 6)
  return (epoch !== null ? epoch + ':' : '') + version + (release !== null ? '-' + release : '')
}

/** Pairs that look equal or nearly so, where a wrong rule shows first; both tools get them besides the random ones. */
const EQUAL_LOOKING: Pair[] = [
  ['1.0', '1.00'], ['1.0', '1.0.0'], ['0:1.0', '1.0'], ['00:1.0', '0:1.0'], ['1.0', '1.0-0'], ['1.0-1', '1.0-01'],
  ['01.0', '1.0'], ['1.0~', '1.0~~'], ['1.0+', '1.0.'], ['1.0a', '1.0A'], ['1.0.a', '1.0a'], ['1.0~0', '1.0~'],
]

/** n pairs: each a random version against either a nearby edit of it or another random version. */
function pairs(seed: number, n: number, gen: (r: Rng) => string, valid: (v: string) => boolean, extra: readonly string[]): Pair[] {
  const r = prng(seed)
  const out: Pair[] = EQUAL_LOOKING.filter(([a, b]) => valid(a) && valid(b))
  while (out.length < n) {
    const a = gen(r)
    const b = r() < 0.7 ? nearby(r, a, extra) : gen(r)
    if (valid(a) && valid(b)) out.push(r() < 0.5 ? [a, b] : [b, a])
  }
  return out
}

/** dpkg's own rules for a version it takes without a warning, so that the oracle never refuses a generated pair. */
function dpkgValid(v: string): boolean {
  const c = v.indexOf(':')
  if (c >= 0 && !/^\d+$/.test(v.slice(0, c))) return false
  const rest = v.slice(c + 1)
  const h = rest.lastIndexOf('-')
  const up = h < 0 ? rest : rest.slice(0, h)
  const rev = h < 0 ? null : rest.slice(h + 1)
  return /^\d[A-Za-z0-9.+~:-]*$/.test(up) && (rev === null || /^[A-Za-z0-9.+~]+$/.test(rev))
}

/** rpm.ver() takes any non-empty string; tabs and newlines would break the batch file ('%' is fine: it is read, not expanded). */
const rpmValid = (v: string) => v.length > 0 && !/[\t\n]/.test(v)

/** Sorted neighbours plus seeded random pairs of `vs`: every adjacent step of a real sort, and some long jumps. */
function neighboursAndRandom(vs: string[], cmp: (a: string, b: string) => number, seed: number, n: number): Pair[] {
  const sorted = [...vs].sort(cmp)
  const out: Pair[] = sorted.slice(1).map((v, i) => [sorted[i]!, v])
  const r = prng(seed)
  for (let i = 0; i < n && vs.length > 1; i++) out.push([pick(r, vs), pick(r, vs)])
  return out
}

/** Which of the named features no generated pair shows, so that a generator change cannot quietly drop a case. */
function uncovered(ps: Pair[], features: Record<string, RegExp>): string[] {
  return Object.entries(features)
    .filter(([, re]) => ps.filter(([a, b]) => re.test(a) || re.test(b)).length < 20)
    .map(([name]) => name)
}

const COMMON_FEATURES = {
  epoch: /^\d+:/,
  'zero-padded epoch': /^0\d*:/,
  tilde: /~/,
  'double tilde': /~~/,
  'trailing tilde': /~$/,
  plus: /\+/,
  'several hyphens': /-.*-.*-/,
  'leading zeros': /(^|\D)0\d/,
  'digit run past 64 bits': /\d{20}/,
  'letters then non-letters': /[a-z][^a-z0-9]/i,
  'empty segment': /[.+~][.+~]/,
}

/** Fails naming the tool when the oracle is missing: these tests prove nothing without it, so they never skip. */
function requireTool(name: string, hint: string): string {
  const path = Bun.which(name)
  if (!path) {
    const why = process.env.CI === 'true' ? 'CI=true: the oracle must be installed' : 'the oracle is needed, nothing is skipped'
    throw new Error(`${name} is missing (${hint}); ${why}`)
  }
  return path
}

/** The first few disagreements, as `a ? b: ours x, tool y`, plus how many there were. */
function disagreements(ps: Pair[], ours: (a: string, b: string) => number, theirs: number[]) {
  const bad: string[] = []
  let count = 0
  ps.forEach(([a, b], i) => {
    const o = ours(a, b)
    if (o !== theirs[i]) {
      count++
      if (bad.length < 8) bad.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ours ${o}, oracle ${theirs[i]}`)
    }
  })
  return { count, first: bad }
}

/** Answers of `dpkg --compare-versions` (lt, then gt) for each pair, from two shell loops running side by side. */
async function dpkgOracle(ps: Pair[]): Promise<{ answers: number[]; refused: string[]; warnings: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-dpkg-'))
  // One bash per half keeps process start-up to dpkg itself; exit 0 is true, 1 false, anything else a refusal.
  const loop = `while IFS=$'\\t' read -r a b; do
  dpkg --compare-versions "$a" lt "$b"; rc=$?
  if [ $rc = 1 ]; then dpkg --compare-versions "$a" gt "$b" 2>/dev/null; rc=$?; [ $rc -le 1 ] && echo $((1 - rc)) || echo "E$rc"
  elif [ $rc = 0 ]; then echo -1; else echo "E$rc"; fi
done`
  try {
    const half = Math.ceil(ps.length / 2)
    const chunks = [ps.slice(0, half), ps.slice(half)]
    const outs = await Promise.all(
      chunks.map(async (chunk, i) => {
        const file = join(dir, `pairs${i}`)
        writeFileSync(file, chunk.map((p) => p.join('\t')).join('\n') + '\n')
        const p = Bun.spawn(['bash', '-c', `${loop} < ${file}`], { stdout: 'pipe', stderr: 'pipe' })
        const [text, warnings] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
        expect(await p.exited).toBe(0)
        return { lines: text.trim().split('\n'), warnings }
      }),
    )
    const lines = outs.flatMap((o) => o.lines)
    expect(lines.length).toBe(ps.length)
    const refused = ps.flatMap(([a, b], i) => (lines[i]!.startsWith('E') ? [`${a} vs ${b}: exit ${lines[i]!.slice(1)}`] : []))
    return { answers: lines.map((l) => (l.startsWith('E') ? NaN : Number(l))), refused, warnings: outs.map((o) => o.warnings).join('') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** rpm's answers for each pair in one `rpm --eval` process: rpm.ver() objects compared (rpmverCmp) and rpm.vercmp (rpmvercmp). */
function rpmOracle(ps: Pair[]): { evr: number[]; vercmp: number[] } {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-rpm-'))
  try {
    const inFile = join(dir, 'pairs')
    const outFile = join(dir, 'answers')
    const script = join(dir, 'oracle.lua')
    writeFileSync(inFile, ps.map((p) => p.join('\t')).join('\n') + '\n')
    // Lua's __lt/__eq on rpm.ver call rpmverCmp, the same EVR compare rpm uses to order installed packages.
    writeFileSync(
      script,
      `local out = io.open(${JSON.stringify(outFile)}, "w")
for line in io.lines(${JSON.stringify(inFile)}) do
  local tab = string.find(line, "\\t", 1, true)
  local a, b = string.sub(line, 1, tab - 1), string.sub(line, tab + 1)
  local va, vb = rpm.ver(a), rpm.ver(b)
  local evr = (va < vb) and -1 or ((va == vb) and 0 or 1)
  out:write(evr, " ", rpm.vercmp(a, b), "\\n")
end
out:close()
`,
    )
    const p = Bun.spawnSync(['rpm', '--eval', `%{lua: dofile(${JSON.stringify(script)})}`], { stderr: 'pipe' })
    expect(p.stderr.toString()).toBe('')
    expect(p.exitCode).toBe(0)
    const lines = readFileSync(outFile, 'utf8').trim().split('\n')
    expect(lines.length).toBe(ps.length)
    return { evr: lines.map((l) => Number(l.split(' ')[0])), vercmp: lines.map((l) => Number(l.split(' ')[1])) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** This host's installed package versions: the strings the project's real Salt test minions report. */
function hostVersions(): string[] {
  requireTool('dpkg-query', 'part of dpkg')
  const p = Bun.spawnSync(['dpkg-query', '-W', '-f', '${Version}\n'])
  return [...new Set(p.stdout.toString().split('\n').filter(Boolean))]
}

describe('dpkg order', () => {
  test.each([
    ['1.0~rc1', '1.0', -1],
    ['1:0.1', '2.0', 1],
    ['1.0', '1.00', 0],
    ['0:1.0', '1.0', 0],
    ['1.0', '1.0-0', 0],
    ['1.0~~', '1.0~', -1],
    ['1.0~', '1.0', -1],
    ['1.0+b1', '1.0.1', -1],
    ['1.0a', '1.0+', -1],
    ['1.0', '1.0a', -1],
    ['2.30-1', '2.30-1+deb12u1', -1],
    ['99999999999999999999999', '99999999999999999999998', 1],
  ] as const)('%s vs %s is %d', (a, b, want) => {
    expect(compareDpkg(a, b)).toBe(want)
    expect(compareDpkg(b, a)).toBe(-want || 0)
  })

  test('agrees with dpkg --compare-versions on 3,400 seeded pairs and on this host\'s installed versions', async () => {
    requireTool('dpkg', 'apt-get install dpkg')
    const random = pairs(20261123, 3400, dpkgVersion, dpkgValid, ['~', '+', '.'])
    expect(uncovered(random, { ...COMMON_FEATURES, 'colon in upstream': /^\d+:.*:/ })).toEqual([])
    const host = hostVersions()
    expect(host.length).toBeGreaterThan(50)
    const real = neighboursAndRandom(host, compareDpkg, 7, 600)
    const all = [...random, ...real]
    const { answers, refused, warnings } = await dpkgOracle(all)
    // Generated versions are valid by dpkg's rules, so a refusal or a syntax warning is a generator bug worth seeing.
    expect(refused.slice(0, 5)).toEqual([])
    expect(warnings.split('\n').slice(0, 5).join('\n')).toBe('')
    expect(disagreements(all, compareDpkg, answers)).toEqual({ count: 0, first: [] })
    // The oracle's answers must not be one-sided, or the pairs prove little.
    for (const v of [-1, 0, 1]) expect(answers.filter((x) => x === v).length).toBeGreaterThan(200)
    console.log(`dpkg oracle: ${random.length} seeded pairs + ${real.length} pairs of ${host.length} installed versions agree`)
  }, 90_000)
})

describe('rpm order', () => {
  test.each([
    ['1.0^git1', '1.0', 1],
    ['1.0~rc1', '1.0', -1],
    ['1.0^', '1.0.1', -1],
    ['1.0^', '1.0', 1],
    ['1.0~rc1', '1.0~rc1^git1', -1],
    ['1.0', '1.0-1', -1], // rpmverCmp: no release sorts below any release
    ['1.0', '1.0-', -1],
    ['1.0_1', '1.0.1', 0],
    ['1.0a', '1.0.1', -1], // alpha segment loses to numeric
    ['1:1.0', '2.0', 1],
    [':1.0', '0:1.0', 0],
    ['a:1', '1', -1], // not an epoch: 'a' is an alpha segment, older than numeric 1
    ['1.01', '1.1', 0],
  ] as const)('%s vs %s is %d', (a, b, want) => {
    expect(compareRpm(a, b)).toBe(want)
    expect(compareRpm(b, a)).toBe(-want || 0)
  })

  test('agrees with rpm 4.18 (rpm.ver EVR compare and rpm.vercmp) on 4,000 seeded pairs and real versions', () => {
    requireTool('rpm', 'apt-get install rpm')
    const random = pairs(424242, 4000, rpmVersion, rpmValid, ['^', '~', '_', '^1', '-1', ':'])
    const rpmFeatures = { caret: /\^/, 'trailing caret': /\^$/, 'empty epoch': /^:/, 'empty release': /-$/, 'other separators': /[_%,=]/ }
    expect(uncovered(random, { ...COMMON_FEATURES, ...rpmFeatures, 'letter-led version': /^(\d*:)?[a-z]/i })).toEqual([])
    // This host's versions are real-world strings too; the dpkg test above fails by name when dpkg-query is missing.
    const host = Bun.which('dpkg-query') ? hostVersions() : []
    const real = neighboursAndRandom(host, compareRpm, 11, 600)
    const all = [...random, ...real]
    const { evr, vercmp } = rpmOracle(all)
    expect(disagreements(all, compareRpm, evr)).toEqual({ count: 0, first: [] })
    // Without ':' and '-' an EVR is a bare version, so rpmvercmp itself must agree too.
    const bare = all.map((p, i) => [p, i] as const).filter(([[a, b]]) => !/[:-]/.test(a + b))
    expect(bare.length).toBeGreaterThan(500)
    expect(disagreements(bare.map(([p]) => p), compareRpm, bare.map(([, i]) => vercmp[i]!))).toEqual({ count: 0, first: [] })
    for (const v of [-1, 0, 1]) expect(evr.filter((x) => x === v).length).toBeGreaterThan(200)
    console.log(`rpm oracle: ${random.length} seeded pairs + ${real.length} real pairs agree (${bare.length} also with rpm.vercmp)`)
  }, 60_000)
})

describe('natural order and dispatch', () => {
  test('digit runs compare numerically, the rest by code point', () => {
    expect(compareNatural('1.10', '1.9')).toBe(1)
    expect(compareNatural('1.010', '1.10')).toBe(0)
    expect(compareNatural('1.0', '1.0a')).toBe(-1)
    expect(compareNatural('2.0-r1', '2.0-r10')).toBe(-1)
    expect(compareNatural('a\u{ffff}', 'a\u{10000}')).toBe(-1) // by code point, not by UTF-16 unit
    expect(compareNatural('123456789012345678901234567890', '123456789012345678901234567891')).toBe(-1)
  })

  test('apt is dpkg, rpm is rpm, anything else natural', () => {
    expect(compareVersions('apt', '1.0~rc1', '1.0')).toBe(-1)
    expect(compareVersions('rpm', '1.0^git1', '1.0')).toBe(1)
    expect(compareVersions('pacman', '1.0~rc1', '1.0')).toBe(1) // '~' is just a character there
  })
})
