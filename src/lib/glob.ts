/** Anchored, case-sensitive glob matching (`*`, `?`) for permission grants. */
const cache = new Map<string, RegExp>()

/** True when `value` matches `glob` as a whole. */
export function globMatch(glob: string, value: string): boolean {
  let re = cache.get(glob)
  if (!re) {
    const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
    re = new RegExp(`^${body}$`, 's')
    cache.set(glob, re)
  }
  return re.test(value)
}

/** Whether text holds a glob character of salt's fnmatch (`*`, `?`, `[`). */
export const hasGlobChars = (s: string) => /[*?[]/.test(s)

const code = (c: string) => c.codePointAt(0)!
const chr = (n: number) => String.fromCodePoint(n)
/** Characters that mean something at some place inside an SQLite GLOB class. */
const CLASS_SPECIAL = new Set([']', '-', '^'])

/** One fnmatch class as an SQLite GLOB class; null when it can match nothing. */
function sqliteClass(negated: boolean, body: string): string | null {
  // fnmatch's class: a leading `]` is a member, `a-z` is a range (an empty one, `z-a`, is dropped), a `-` at either end is a member.
  const singles = new Set<string>()
  const ranges: [number, number][] = []
  const chars = [...body]
  for (let k = 0; k < chars.length; k++) {
    if (chars[k + 1] === '-' && k + 2 < chars.length) {
      let lo = code(chars[k]!)
      let hi = code(chars[k + 2]!)
      k += 2
      // A special character at either end of a range is taken out as a member, so the class below stays unambiguous.
      while (lo <= hi && CLASS_SPECIAL.has(chr(lo))) singles.add(chr(lo++))
      while (lo <= hi && CLASS_SPECIAL.has(chr(hi))) singles.add(chr(hi--))
      if (lo < hi) ranges.push([lo, hi])
      else if (lo === hi) singles.add(chr(lo))
    } else singles.add(chars[k]!)
  }
  if (!singles.size && !ranges.length) return negated ? '?' : null
  // SQLite reads `^` first as negation, `]` first (after any `^`) as a member and `-` last as a member.
  let inner = singles.has(']') ? ']' : ''
  for (const c of singles) if (!CLASS_SPECIAL.has(c)) inner += c
  for (const [lo, hi] of ranges) inner += `${chr(lo)}-${chr(hi)}`
  if (!negated && !inner) {
    if (singles.has('^') && singles.has('-')) return '[-^]'
    return singles.has('^') ? '^' : '-'
  }
  if (singles.has('^')) inner += '^'
  if (singles.has('-')) inner += '-'
  return `[${negated ? '^' : ''}${inner}]`
}

/**
 * Salt's glob (Python fnmatch: `*`, `?`, `[…]`, `[!…]` negated; a `[` with no closing `]` is a literal `[`; no escapes)
 * as an SQLite GLOB pattern that matches the same strings, to be bound as a parameter. Literal `*`, `?` and `[` become
 * one-character classes. Null when the glob can match nothing (an empty class such as `[z-a]`).
 */
export function sqliteGlob(glob: string): string | null {
  let out = ''
  const g = [...glob]
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!
    if (c === '*' || c === '?') out += c
    else if (c === '[') {
      let j = i + 1
      const negated = g[j] === '!'
      if (negated) j++
      const start = j
      if (g[j] === ']') j++
      while (j < g.length && g[j] !== ']') j++
      if (j >= g.length) {
        out += '[[]'
        continue
      }
      const cls = sqliteClass(negated, g.slice(start, j).join(''))
      if (cls === null) return null
      out += cls
      i = j
    } else out += c
  }
  return out
}

/**
 * An SQLite GLOB pattern (as sqliteGlob writes it) as an anchored PostgreSQL regular expression (`~`) matching the same
 * strings: PostgreSQL has no GLOB. Literals are escaped; a class keeps its members, ranges and negation.
 */
export function pgGlobRegex(glob: string): string {
  let out = '^'
  const g = [...glob]
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!
    if (c === '*') out += '.*'
    else if (c === '?') out += '.'
    else if (c === '[') {
      let j = i + 1
      let cls = '['
      if (g[j] === '^') (cls += '^'), j++
      // A `]` first is a member in SQLite's class; escaped, as a `\` or `[` inside is (PostgreSQL reads those there).
      if (g[j] === ']') (cls += '\\]'), j++
      for (; j < g.length && g[j] !== ']'; j++) cls += /[\\[\]]/.test(g[j]!) ? `\\${g[j]}` : g[j]
      out += `${cls}]`
      i = j
    } else out += /[.+*?^${}()|[\]\\]/.test(c) ? `\\${c}` : c
  }
  return `${out}$`
}

/** One token of a salt glob: any run (`*`), or one character that passes the test. */
type SaltToken = { star: true } | { star: false; one: (c: string) => boolean }

/** One fnmatch class body (after `[`, before `]`) as a character test, as Python's fnmatch.translate reads it. */
function fnmatchClass(body: string): (c: string) => boolean {
  const negated = body.startsWith('!')
  const chars = [...(negated ? body.slice(1) : body)]
  const singles = new Set<string>()
  const ranges: [number, number][] = []
  for (let k = 0; k < chars.length; k++) {
    if (chars[k + 1] === '-' && k + 2 < chars.length) {
      // Python drops an empty range such as `z-a`; a range is otherwise kept as it is.
      if (code(chars[k]!) <= code(chars[k + 2]!)) ranges.push([code(chars[k]!), code(chars[k + 2]!)])
      k += 2
    } else singles.add(chars[k]!)
  }
  return (c) => (singles.has(c) || ranges.some(([lo, hi]) => code(c) >= lo && code(c) <= hi)) !== negated
}

/** A salt glob as tokens. */
function saltTokens(glob: string): SaltToken[] {
  const out: SaltToken[] = []
  const g = [...glob]
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!
    if (c === '*') {
      if (!out.at(-1)?.star) out.push({ star: true })
    } else if (c === '?') out.push({ star: false, one: () => true })
    else if (c === '[') {
      let j = i + 1
      if (g[j] === '!') j++
      if (g[j] === ']') j++
      while (j < g.length && g[j] !== ']') j++
      if (j >= g.length) out.push({ star: false, one: (x) => x === '[' })
      else {
        out.push({ star: false, one: fnmatchClass(g.slice(i + 1, j).join('')) })
        i = j
      }
    } else out.push({ star: false, one: (x) => x === c })
  }
  return out
}

const saltCache = new Map<string, SaltToken[]>()

/**
 * Salt's glob on minion ids (Python fnmatch on a POSIX master: `*`, `?`, `[…]`, `[!…]`, a `[` with no closing `]` a
 * literal `[`, no escapes, case-sensitive), matched against the whole id. Matched with one backtrack point per star
 * rather than a RegExp, so a glob of many stars cannot take exponential time.
 */
export function saltGlobMatch(glob: string, id: string): boolean {
  let toks = saltCache.get(glob)
  if (!toks) {
    toks = saltTokens(glob)
    if (saltCache.size > 1000) saltCache.clear()
    saltCache.set(glob, toks)
  }
  const s = [...id]
  let t = 0
  let i = 0
  let starT = -1
  let starI = 0
  while (i < s.length) {
    const tok = toks[t]
    if (tok && !tok.star && tok.one(s[i]!)) {
      t++
      i++
    } else if (tok?.star) {
      starT = t++
      starI = i
    } else if (starT >= 0) {
      t = starT + 1
      i = ++starI
    } else return false
  }
  while (toks[t]?.star) t++
  return t === toks.length
}

/** Whether a grant glob (`*`, `?`) can match some value that starts with `prefix` (a grant on some resource of a kind). */
export function globCanMatchPrefix(glob: string, prefix: string): boolean {
  for (let i = 0; i < prefix.length; i++) {
    const c = glob[i]
    if (c === undefined) return false
    if (c === '*') return true
    if (c !== '?' && c !== prefix[i]) return false
  }
  return true
}
