/** Exact version ordering of Debian (dpkg) and RPM (rpm 4.18), and a natural order for other package systems. */
// These run millions of times when a vulnerability feed is matched against a fleet, so they walk index ranges of the
// original strings: no regexes, no slices, no allocation per call.

const ZERO = 48
const NINE = 57
const TILDE = 126
const CARET = 94
const COLON = 58

const isDigit = (c: number) => c >= ZERO && c <= NINE
// Both tools classify with ASCII-only ctype (dpkg's c_isalpha, rpm's risalpha), never the locale's.
const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** Numeric order of the digit runs a[ai,ae) and b[bi,be), however long: leading zeros dropped, then length, then digits. */
function compareDigitRuns(a: string, ai: number, ae: number, b: string, bi: number, be: number): number {
  while (ai < ae && a.charCodeAt(ai) === ZERO) ai++
  while (bi < be && b.charCodeAt(bi) === ZERO) bi++
  if (ae - ai !== be - bi) return ae - ai < be - bi ? -1 : 1
  for (; ai < ae; ai++, bi++) {
    const d = a.charCodeAt(ai) - b.charCodeAt(bi)
    if (d) return d < 0 ? -1 : 1
  }
  return 0
}

/** dpkg's weight of a character in a non-digit run: '~' below the end of the part, letters by ASCII, the rest after all letters. */
function dpkgWeight(s: string, i: number, end: number): number {
  if (i >= end) return 0
  const c = s.charCodeAt(i)
  if (c === TILDE) return -1
  if (isDigit(c)) return 0 // a digit ends the non-digit run, like the end of the part
  if (isAlpha(c)) return c
  return c + 256
}

/** dpkg's verrevcmp on a[ai,ae) and b[bi,be): alternating non-digit runs (by weight) and digit runs (numerically). */
function dpkgPartCmp(a: string, ai: number, ae: number, b: string, bi: number, be: number): number {
  while (ai < ae || bi < be) {
    while ((ai < ae && !isDigit(a.charCodeAt(ai))) || (bi < be && !isDigit(b.charCodeAt(bi)))) {
      const wa = dpkgWeight(a, ai, ae)
      const wb = dpkgWeight(b, bi, be)
      if (wa !== wb) return wa < wb ? -1 : 1
      // Equal weights here mean both sides hold a non-digit (the end and a digit weigh 0, every non-digit weighs non-zero).
      ai++
      bi++
    }
    let da = ai
    let db = bi
    while (da < ae && isDigit(a.charCodeAt(da))) da++
    while (db < be && isDigit(b.charCodeAt(db))) db++
    const r = compareDigitRuns(a, ai, da, b, bi, db)
    if (r) return r
    ai = da
    bi = db
  }
  return 0
}

/** Debian's version order exactly as `dpkg --compare-versions`: epoch, then upstream, then revision; -1, 0 or 1. */
export function compareDpkg(a: string, b: string): number {
  if (a === b) return 0
  // Epoch: before the first ':' (dpkg's strchr); none means 0, which an empty digit run already is.
  const ac = a.indexOf(':')
  const bc = b.indexOf(':')
  const r = compareDigitRuns(a, 0, ac < 0 ? 0 : ac, b, 0, bc < 0 ? 0 : bc)
  if (r) return r
  const as = ac + 1
  const bs = bc + 1
  // Revision: after the last '-' (dpkg's strrchr); none compares as "", so "1.0" equals "1.0-0".
  let ah = a.lastIndexOf('-')
  let bh = b.lastIndexOf('-')
  if (ah < as) ah = a.length
  if (bh < bs) bh = b.length
  return dpkgPartCmp(a, as, ah, b, bs, bh) || dpkgPartCmp(a, ah + 1, a.length, b, bh + 1, b.length)
}

/** True for what rpmvercmp skips between segments: anything but ASCII letters, digits, '~' and '^'. */
const isRpmSep = (c: number) => !isDigit(c) && !isAlpha(c) && c !== TILDE && c !== CARET

/** rpm's rpmvercmp on a[ai,ae) and b[bi,be): alpha/numeric segments, '~' before everything, '^' after the end only. */
function rpmvercmp(a: string, ai: number, ae: number, b: string, bi: number, be: number): number {
  while (ai < ae || bi < be) {
    while (ai < ae && isRpmSep(a.charCodeAt(ai))) ai++
    while (bi < be && isRpmSep(b.charCodeAt(bi))) bi++
    const ca = ai < ae ? a.charCodeAt(ai) : -1
    const cb = bi < be ? b.charCodeAt(bi) : -1
    if (ca === TILDE || cb === TILDE) {
      if (ca !== TILDE) return 1
      if (cb !== TILDE) return -1
      ai++
      bi++
      continue
    }
    // '^' (a post-release snapshot) beats the end of the other side but loses to any further segment.
    if (ca === CARET || cb === CARET) {
      if (ca < 0) return -1
      if (cb < 0) return 1
      if (ca !== CARET) return 1
      if (cb !== CARET) return -1
      ai++
      bi++
      continue
    }
    if (ca < 0 || cb < 0) break
    let ea = ai
    let eb = bi
    if (isDigit(ca)) {
      if (!isDigit(cb)) return 1 // a numeric segment is newer than an alpha one
      while (ea < ae && isDigit(a.charCodeAt(ea))) ea++
      while (eb < be && isDigit(b.charCodeAt(eb))) eb++
      const r = compareDigitRuns(a, ai, ea, b, bi, eb)
      if (r) return r
    } else {
      if (!isAlpha(cb)) return -1
      while (ea < ae && isAlpha(a.charCodeAt(ea))) ea++
      while (eb < be && isAlpha(b.charCodeAt(eb))) eb++
      // strcmp of the two letter runs: first differing letter, else the shorter run is smaller.
      for (let i = ai, j = bi; i < ea && j < eb; i++, j++) {
        const d = a.charCodeAt(i) - b.charCodeAt(j)
        if (d) return d < 0 ? -1 : 1
      }
      if (ea - ai !== eb - bi) return ea - ai < eb - bi ? -1 : 1
    }
    ai = ea
    bi = eb
  }
  // Segments all equal: whichever side still has something (only separators can be left on both) is newer.
  if (ai >= ae && bi >= be) return 0
  return ai >= ae ? -1 : 1
}

/** RPM's [epoch:]version[-release] order as rpm 4.18 compares EVRs (rpmverCmp); -1, 0 or 1. */
export function compareRpm(a: string, b: string): number {
  if (a === b) return 0
  // Epoch: only a run of digits directly followed by ':' counts; otherwise the ':' belongs to the version.
  let ae = 0
  let be = 0
  while (ae < a.length && isDigit(a.charCodeAt(ae))) ae++
  while (be < b.length && isDigit(b.charCodeAt(be))) be++
  const aEpoch = ae < a.length && a.charCodeAt(ae) === COLON
  const bEpoch = be < b.length && b.charCodeAt(be) === COLON
  // A missing or empty epoch is "0", which an empty digit run already compares as.
  const r = compareDigitRuns(a, 0, aEpoch ? ae : 0, b, 0, bEpoch ? be : 0)
  if (r) return r
  const as = aEpoch ? ae + 1 : 0
  const bs = bEpoch ? be + 1 : 0
  const ah = lastHyphen(a, as)
  const bh = lastHyphen(b, bs)
  const v = rpmvercmp(a, as, ah < 0 ? a.length : ah, b, bs, bh < 0 ? b.length : bh)
  if (v) return v
  // rpmverCmp, unlike dependency matching (rpmdsCompare), ranks a missing release below any release, even an empty one.
  if (ah < 0 || bh < 0) return ah < 0 ? (bh < 0 ? 0 : -1) : 1
  return rpmvercmp(a, ah + 1, a.length, b, bh + 1, b.length)
}

/** Index of the last '-' at or after `from`, or -1: where rpm cuts the release off. */
function lastHyphen(s: string, from: number): number {
  const i = s.lastIndexOf('-')
  return i >= from ? i : -1
}

/** A UTF-16 code unit remapped so that comparing two of them orders by code point (surrogates above U+FFFF's BMP neighbours). */
const codePointKey = (c: number) => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c)

/** A plain natural order for package systems without a documented one: digit runs numerically, the rest by code point. */
export function compareNatural(a: string, b: string): number {
  if (a === b) return 0
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(j)
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i
      let ej = j
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++
      const r = compareDigitRuns(a, i, ei, b, j, ej)
      if (r) return r
      i = ei
      j = ej
      continue
    }
    if (ca !== cb) return codePointKey(ca) < codePointKey(cb) ? -1 : 1
    i++
    j++
  }
  if (i < a.length) return 1
  return j < b.length ? -1 : 0
}

/** The order of a package source's versions: 'apt' is dpkg's, 'rpm' is rpm's, any other source the natural order. */
export function compareVersions(source: string, a: string, b: string): number {
  if (source === 'apt') return compareDpkg(a, b)
  if (source === 'rpm') return compareRpm(a, b)
  return compareNatural(a, b)
}

// What each package system accepts as a version (dpkg's parseversion, rpm's EVR characters); others: no spaces or controls.
const DPKG_REVISION = /^[A-Za-z0-9.+~]+$/
const RPM_EVR = /^(\d+:)?[A-Za-z0-9._+~^]+(-[A-Za-z0-9._+~^]+)?$/
const PLAIN = /^[^\s\u0000-\u001f\u007f]+$/

/** Why `v` is not a version of a package source ('apt': dpkg's rules, 'rpm': rpm's, others: no blanks), or null. */
export function versionProblem(source: string, v: string): string | null {
  if (source === 'apt') {
    const m = /^(?:(\d+):)?(.*)$/s.exec(v)!
    const rest = m[2]!
    const dash = rest.lastIndexOf('-')
    const upstream = dash < 0 ? rest : rest.slice(0, dash)
    if (dash >= 0 && !DPKG_REVISION.test(rest.slice(dash + 1))) return 'not a Debian version: the revision after the last "-" takes only letters, digits and . + ~'
    const allowed = new RegExp(`^[0-9][A-Za-z0-9.+~${dash >= 0 ? '\\-' : ''}${m[1] !== undefined ? ':' : ''}]*$`)
    return allowed.test(upstream) ? null : 'not a Debian version: it starts with a digit and holds only letters, digits and . + ~ (- before a revision, : after an epoch)'
  }
  if (source === 'rpm') return RPM_EVR.test(v) ? null : 'not an RPM version: [epoch:]version[-release] of letters, digits and . _ + ~ ^'
  return PLAIN.test(v) ? null : 'not a version: it holds blanks or control characters'
}
