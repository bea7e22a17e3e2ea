/**
 * Version order of package systems: dpkg's (Debian, Ubuntu), rpm's (Enterprise Linux), and a natural order for the
 * rest. Index walking over the strings without allocations per call: a feed import compares millions of pairs.
 */

const isDigit = (c: number) => c >= 48 && c <= 57
const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0)

/** Compares the digit runs a[i, ie) and b[j, je) as numbers of any length (leading zeros ignored). */
function compareDigits(a: string, i: number, ie: number, b: string, j: number, je: number): number {
  while (i < ie && a.charCodeAt(i) === 48) i++
  while (j < je && b.charCodeAt(j) === 48) j++
  if (ie - i !== je - j) return ie - i < je - j ? -1 : 1
  for (; i < ie; i++, j++) {
    const d = a.charCodeAt(i) - b.charCodeAt(j)
    if (d) return d < 0 ? -1 : 1
  }
  return 0
}

/** dpkg's weight of a character in a non-digit run: `~` before the end, the end (0), letters, then everything else. */
function dpkgWeight(s: string, i: number, end: number): number {
  if (i >= end) return 0
  const c = s.charCodeAt(i)
  if (isDigit(c)) return 0
  if (isAlpha(c)) return c
  if (c === 126) return -1
  return c + 256
}

/** dpkg's verrevcmp over a[i, ie) and b[j, je): alternating non-digit runs (by weight) and digit runs (numerically). */
function verrevcmp(a: string, i: number, ie: number, b: string, j: number, je: number): number {
  while (i < ie || j < je) {
    while ((i < ie && !isDigit(a.charCodeAt(i))) || (j < je && !isDigit(b.charCodeAt(j)))) {
      const wa = dpkgWeight(a, i, ie)
      const wb = dpkgWeight(b, j, je)
      if (wa !== wb) return wa < wb ? -1 : 1
      i++
      j++
    }
    let di = i
    let dj = j
    while (di < ie && isDigit(a.charCodeAt(di))) di++
    while (dj < je && isDigit(b.charCodeAt(dj))) dj++
    const d = compareDigits(a, i, di, b, j, dj)
    if (d) return d
    i = di
    j = dj
  }
  return 0
}

/** Splits `[epoch:]upstream[-revision]` (revision after the last hyphen) into offsets: epoch end, upstream start and end. */
function dpkgParts(v: string): [number, number, number] {
  const colon = v.indexOf(':')
  const start = colon >= 0 && /^\d*$/.test(v.slice(0, colon)) ? colon + 1 : 0
  const dash = v.lastIndexOf('-')
  return [start ? colon : -1, start, dash >= start ? dash : v.length]
}

/** The epoch of a version whose colon is at `colon` (-1: none); dpkg reads digits only. */
function epochOf(v: string, colon: number): number {
  return colon > 0 ? Number(v.slice(0, colon)) || 0 : 0
}

/**
 * Compares two `[epoch:]version[-release]` strings as both systems do: epochs numerically, then the version, then the
 * release (after the last hyphen; a missing one compares as empty), each with the system's own segment order.
 */
function compareEvr(a: string, b: string, part: (a: string, i: number, ie: number, b: string, j: number, je: number) => number): number {
  if (a === b) return 0
  const [ca, ua, ra] = dpkgParts(a)
  const [cb, ub, rb] = dpkgParts(b)
  const ea = epochOf(a, ca)
  const eb = epochOf(b, cb)
  if (ea !== eb) return ea < eb ? -1 : 1
  const v = part(a, ua, ra, b, ub, rb)
  if (v) return v
  return part(a, Math.min(ra + 1, a.length), a.length, b, Math.min(rb + 1, b.length), b.length)
}

/** Debian's version order, as `dpkg --compare-versions` has it; -1, 0 or 1. */
export const compareDpkg = (a: string, b: string): number => compareEvr(a, b, verrevcmp)

/** rpm's separators: anything that is neither alphanumeric nor `~` nor `^`. */
const rpmSep = (c: number) => !isDigit(c) && !isAlpha(c) && c !== 126 && c !== 94

/** rpmvercmp over a[i, ie) and b[j, je): segments of digits or letters, `~` lowest, `^` above the end only. */
function rpmvercmp(a: string, i: number, ie: number, b: string, j: number, je: number): number {
  if (ie - i === je - j && a.slice(i, ie) === b.slice(j, je)) return 0
  while (i < ie || j < je) {
    while (i < ie && rpmSep(a.charCodeAt(i))) i++
    while (j < je && rpmSep(b.charCodeAt(j))) j++
    const ta = i < ie && a.charCodeAt(i) === 126
    const tb = j < je && b.charCodeAt(j) === 126
    if (ta || tb) {
      if (!ta) return 1
      if (!tb) return -1
      i++, j++
      continue
    }
    const ca = i < ie && a.charCodeAt(i) === 94
    const cb = j < je && b.charCodeAt(j) === 94
    if (ca || cb) {
      if (i >= ie) return -1
      if (j >= je) return 1
      if (!ca) return 1
      if (!cb) return -1
      i++, j++
      continue
    }
    if (!(i < ie && j < je)) break
    const numeric = isDigit(a.charCodeAt(i))
    let si = i
    let sj = j
    if (numeric) {
      while (si < ie && isDigit(a.charCodeAt(si))) si++
      while (sj < je && isDigit(b.charCodeAt(sj))) sj++
    } else {
      while (si < ie && isAlpha(a.charCodeAt(si))) si++
      while (sj < je && isAlpha(b.charCodeAt(sj))) sj++
    }
    // A numeric segment is newer than an alpha one.
    if (sj === j) return numeric ? 1 : -1
    if (numeric) {
      const d = compareDigits(a, i, si, b, j, sj)
      if (d) return d
    } else {
      const d = strcmp(a, i, si, b, j, sj)
      if (d) return d
    }
    i = si
    j = sj
  }
  if (i >= ie && j >= je) return 0
  return i >= ie ? -1 : 1
}

/** Byte order of two runs. */
function strcmp(a: string, i: number, ie: number, b: string, j: number, je: number): number {
  for (; i < ie && j < je; i++, j++) {
    const d = a.charCodeAt(i) - b.charCodeAt(j)
    if (d) return d < 0 ? -1 : 1
  }
  return sign(ie - i - (je - j))
}

/** rpm's `[epoch:]version[-release]` order, as rpm 4.18's `rpm.ver` compares; -1, 0 or 1. */
export const compareRpm = (a: string, b: string): number => compareEvr(a, b, rpmvercmp)

/** A plain natural order: digit runs numerically, everything else by code point. */
export function compareNatural(a: string, b: string): number {
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(j)
    if (isDigit(ca) && isDigit(cb)) {
      let si = i
      let sj = j
      while (si < a.length && isDigit(a.charCodeAt(si))) si++
      while (sj < b.length && isDigit(b.charCodeAt(sj))) sj++
      const d = compareDigits(a, i, si, b, j, sj)
      if (d) return d
      i = si
      j = sj
    } else {
      if (ca !== cb) return ca < cb ? -1 : 1
      i++
      j++
    }
  }
  return sign(a.length - i - (b.length - j))
}

/** The order of a package source: `apt` by dpkg, `rpm` by rpm, anything else naturally. */
export function compareVersions(source: string, a: string, b: string): number {
  return source === 'apt' ? compareDpkg(a, b) : source === 'rpm' ? compareRpm(a, b) : compareNatural(a, b)
}
