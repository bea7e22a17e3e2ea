// Proves the version comparators against the real tools as oracles (contract §12): `dpkg --compare-versions` for
// Debian's order and rpm's own EVR comparison (rpm 4.18's Lua `rpm.ver`, Debian's `rpm` package) for rpm's, over
// thousands of generated pairs (epochs, tildes, carets, leading zeros, letters, empty segments) and the versions the
// packages of this host have, which are the versions the real Salt test minions report.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { compareDpkg, compareNatural, compareRpm, compareVersions } from '../../src/lib/version-order'

const dir = mkdtempSync(join(tmpdir(), 'verorder-'))
let seed = 20261123
const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed % n)
const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!

/** A segment of digits (leading zeros sometimes, long runs sometimes) or letters. */
const digits = () => (rnd(6) === 0 ? '0' : '') + (rnd(15) === 0 ? '12345678901234567890'.slice(0, 10 + rnd(10)) : String(rnd(rnd(3) ? 20 : 1000)))
const letters = () => pick(['a', 'b', 'rc', 'Z', 'alpha', 'beta', 'git', 'dfsg', 'deb', 'el', 'Ubuntu'])

/** A random string of version parts from an alphabet of separators. */
function parts(seps: readonly string[], max: number): string {
  let s = digits()
  for (let i = rnd(max); i > 0; i--) s += pick(seps) + (rnd(3) ? digits() : letters())
  return s
}

/** A valid Debian version: [epoch:]upstream[-revision], upstream starting with a digit. */
function debVersion(): string {
  const epoch = rnd(5) === 0 ? `${rnd(3)}:` : ''
  let up = parts(['.', '.', '+', '~', '', '~~'], 5)
  const rev = rnd(3) ? `-${parts(['.', '+', '~', ''], 3).replace(/^/, rnd(4) === 0 ? letters() : '')}` : ''
  if (rev && rnd(4) === 0) up += `-${digits()}` // a hyphen inside the upstream version
  return epoch + up + rev
}

/** An rpm EVR: [epoch:]version[-release] with `~`, `^`, separators rpm skips and empty segments. */
function rpmVersion(): string {
  const epoch = rnd(5) === 0 ? `${rnd(3)}:` : ''
  const v = parts(['.', '.', '_', '+', '~', '^', '..', ''], 5)
  const r = rnd(3) ? `-${parts(['.', '_', '~', '^', ''], 3)}${rnd(3) === 0 ? `.el${rnd(10)}` : ''}` : ''
  return epoch + v + r
}

/** A small change of a version, so most pairs are close (where orders differ). */
function near(v: string, alphabet: readonly string[]): string {
  const i = rnd(v.length + 1)
  switch (rnd(6)) {
    case 0: return v + pick(alphabet)
    case 1: return v.slice(0, i) + pick(alphabet) + v.slice(i)
    case 2: return v.slice(0, i) + v.slice(i + 1) || v
    case 3: return v.replace(/\d+/, (d) => `0${d}`)
    case 4: return v.replace(/\d+$/, (d) => String(Number(d.slice(-6)) + 1))
    default: return v
  }
}

/** Pairs: random pairs and near pairs, both sides valid for the tool (dpkg refuses to compare a bad version). */
function pairs(gen: () => string, alphabet: readonly string[], n: number, valid: (v: string) => boolean = () => true): [string, string][] {
  const out: [string, string][] = []
  while (out.length < n) {
    const a = gen()
    const b = rnd(3) === 0 ? gen() : near(a, alphabet)
    if (valid(a) && valid(b)) out.push([a, b])
  }
  return out
}

/** dpkg's syntax: digits then `:` for an epoch, an upstream starting with a digit, a non-empty revision after a hyphen. */
const validDeb = (v: string) => /^(\d+:)?\d[A-Za-z0-9.+~-]*$/.test(v) && !v.endsWith('-')

/** The host's package versions (what the real minions report): sorted neighbours and random pairs. */
function hostVersions(): [string, string][] {
  const q = Bun.spawnSync(['dpkg-query', '-W', '-f', '${Version}\n'], { stdout: 'pipe' })
  const vs = [...new Set(q.stdout.toString().split('\n').filter(Boolean))]
  const sorted = [...vs].sort()
  const out: [string, string][] = []
  for (let i = 1; i < sorted.length; i++) out.push([sorted[i - 1]!, sorted[i]!])
  for (let i = 0; i < vs.length; i++) out.push([vs[i]!, vs[rnd(vs.length)]!])
  return out
}

const have = (tool: string) => Bun.which(tool) !== null

/** dpkg's answer for each pair (-1, 0, 1), from two shell loops side by side (one `dpkg` per comparison). */
async function dpkgOracle(ps: [string, string][]): Promise<number[]> {
  const half = Math.ceil(ps.length / 2)
  const run = async (part: [string, string][], k: number) => {
    const file = join(dir, `dpkg-${k}.tsv`)
    writeFileSync(file, part.map(([a, b]) => `${a}\t${b}`).join('\n') + '\n')
    const script = `while IFS=$'\\t' read -r a b; do if dpkg --compare-versions "$a" lt "$b" 2>/dev/null; then echo -1; elif dpkg --compare-versions "$a" eq "$b" 2>/dev/null; then echo 0; else echo 1; fi; done < "${file}"`
    const p = Bun.spawn(['bash', '-c', script], { stdout: 'pipe' })
    return (await new Response(p.stdout).text()).trim().split('\n').map(Number)
  }
  const [x, y] = await Promise.all([run(ps.slice(0, half), 0), run(ps.slice(half), 1)])
  return [...x, ...y]
}

/** rpm's answer for each pair, from one `rpm --eval` running Lua over the whole list with rpm.ver objects. */
function rpmOracle(ps: [string, string][]): number[] {
  const file = join(dir, 'rpm.tsv')
  writeFileSync(file, ps.map(([a, b]) => `${a}\t${b}`).join('\n') + '\n')
  const lua = `%{lua: local out = {}; for line in io.lines("${file}") do local a, b = line:match("^(.-)\\t(.*)$"); local x, y = rpm.ver(a), rpm.ver(b); out[#out + 1] = (x < y) and "-1" or ((x == y) and "0" or "1") end; print(table.concat(out, ","))}`
  const p = Bun.spawnSync(['rpm', '--eval', lua], { stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`rpm --eval failed: ${p.stderr}`)
  return p.stdout.toString().trim().split(',').map(Number)
}

/** The first mismatches, readable. */
function mismatches(ps: [string, string][], ours: (a: string, b: string) => number, oracle: number[]) {
  return ps.flatMap(([a, b], i) => (ours(a, b) === oracle[i] ? [] : [`${a} vs ${b}: ours ${ours(a, b)}, oracle ${oracle[i]}`])).slice(0, 10)
}

describe('dpkg order', () => {
  test('known answers', () => {
    expect(compareDpkg('1.0~rc1', '1.0')).toBe(-1)
    expect(compareDpkg('1:0.1', '2.0')).toBe(1)
    expect(compareDpkg('1.0', '1.00')).toBe(0)
    expect(compareDpkg('0:1.0', '1.0')).toBe(0)
    expect(compareDpkg('1.0a', '1.0+')).toBe(-1) // letters before other characters
    expect(compareDpkg('1.0~~', '1.0~')).toBe(-1)
    expect(compareDpkg('3.0.11-1~deb12u1', '3.0.11-1')).toBe(-1)
  })

  test('agrees with dpkg --compare-versions on generated pairs and on this host\'s versions', async () => {
    expect(have('dpkg'), 'dpkg is the oracle of this test and must be installed').toBe(true)
    const ps = [...pairs(debVersion, ['.', '+', '~', 'a', '0', '1', '9', '-1', '~rc1'], 3000, validDeb), ...hostVersions()]
    const oracle = await dpkgOracle(ps)
    expect(oracle).toHaveLength(ps.length)
    expect(mismatches(ps, compareDpkg, oracle)).toEqual([])
    // The pairs are not all trivially equal or one-sided.
    expect(new Set(oracle).size).toBe(3)
    expect(oracle.filter((x) => x === 0).length).toBeGreaterThan(50)
    console.log(`dpkg order: ${ps.length} pairs agree with dpkg --compare-versions`)
  }, 120_000)
})

describe('rpm order', () => {
  test('known answers', () => {
    expect(compareRpm('1.0^git1', '1.0')).toBe(1)
    expect(compareRpm('1.0~rc1', '1.0')).toBe(-1)
    expect(compareRpm('1.0^', '1.0.1')).toBe(-1)
    expect(compareRpm('1:1.0', '2.0')).toBe(1)
    expect(compareRpm('1.0', '1.0-1')).toBe(-1)
    expect(compareRpm('1.01', '1.1')).toBe(0)
    expect(compareRpm('3.0.7-24.el9', '3.0.7-27.el9')).toBe(-1)
  })

  test("agrees with rpm's own comparison (rpm.ver) on generated pairs", () => {
    expect(have('rpm'), "rpm (Debian's package) is the oracle of this test and must be installed").toBe(true)
    const ps = pairs(rpmVersion, ['.', '_', '~', '^', 'a', '0', '1', '-1', '~rc1', '^git1'], 4000)
    const oracle = rpmOracle(ps)
    expect(oracle).toHaveLength(ps.length)
    expect(mismatches(ps, compareRpm, oracle)).toEqual([])
    expect(new Set(oracle).size).toBe(3)
    console.log(`rpm order: ${ps.length} pairs agree with rpm.ver`)
  }, 60_000)
})

describe('natural order and dispatch', () => {
  test('digit runs by value, the rest by code point; sources pick their order', () => {
    expect(compareNatural('1.10', '1.9')).toBe(1)
    expect(compareNatural('1.010', '1.10')).toBe(0)
    expect(compareNatural('1.0a', '1.0')).toBe(1)
    expect(compareVersions('apt', '1.0~rc1', '1.0')).toBe(-1)
    expect(compareVersions('rpm', '1.0^git1', '1.0')).toBe(1)
    expect(compareVersions('pacman', '1.10', '1.9')).toBe(1)
  })
})
