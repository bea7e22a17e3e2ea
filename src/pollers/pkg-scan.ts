/**
 * Reads a salt-api `pkg.list_pkgs` answer (`{"return": [{minion: {name: [versions]}}]}`) straight from its bytes into
 * catalog key indexes. JSON.parse of a 50,000-minion fleet's answers alone cost more than the whole refresh budget, so
 * the common shape (plain ASCII names and versions, lists or comma-joined strings) is scanned in place; any minion
 * value outside it (escapes, non-ASCII, {version, arch} objects, errors) is cut out and read by JSON.parse and
 * parsePkgList, so the result is always what JSON.parse would give.
 */
import type { PackageCatalog } from '../features/inventory/catalog'
import type { Pkg } from '../features/inventory/writer'

const Q = 34 // "
const BS = 92 // \
const COMMA = 44
const COLON = 58
const decoder = new TextDecoder()

/** Reads one minion's pkg.list_pkgs value: lists of versions, comma-joined strings, or {version, arch} objects. */
export function parsePkgList(v: unknown): Pkg[] | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null
  const out: Pkg[] = []
  for (const [name, val] of Object.entries(v as Record<string, unknown>)) {
    const items = Array.isArray(val) ? val : typeof val === 'string' ? val.split(',') : [val]
    for (const it of items) {
      if (typeof it === 'string' && it) out.push({ name, version: it })
      else if (it && typeof it === 'object' && typeof (it as any).version === 'string')
        out.push({ name, version: (it as any).version, arch: typeof (it as any).arch === 'string' ? (it as any).arch : '' })
    }
  }
  return out
}

/** The key indexes of each minion of an answer (null: the value is not a package list); last value wins per minion. */
export type ScannedSets = Map<string, Int32Array | null>

/** Scans a whole answer; falls back to JSON.parse of all of it when its outer shape is not the usual one. */
export function scanPkgAnswer(body: Uint8Array, cat: PackageCatalog): ScannedSets {
  const out: ScannedSets = new Map()
  const s = new Scanner(body, cat)
  if (s.answer(out)) return out
  // Unusual outer shape (or malformed JSON, which JSON.parse then reports).
  out.clear()
  const ret = (JSON.parse(decoder.decode(body)) as { return: unknown[] }).return[0]
  if (ret && typeof ret === 'object' && !Array.isArray(ret))
    for (const [m, v] of Object.entries(ret as Record<string, unknown>)) out.set(m, keysOf(parsePkgList(v), cat))
  return out
}

/** Key indexes of parsed package rows. */
function keysOf(list: Pkg[] | null, cat: PackageCatalog): Int32Array | null {
  return list && Int32Array.from(list, (p) => cat.keyOf(p.name, p.version, p.arch ?? ''))
}

class Scanner {
  private i = 0
  private keys: Int32Array<ArrayBuffer> = new Int32Array(4096)
  private n = 0
  private nameSeen: Int32Array<ArrayBuffer> = new Int32Array(1024)
  private tick = 0

  constructor(private b: Uint8Array, private cat: PackageCatalog) {}

  /** `{"return": [ {minion: value, …} …] }`; false when the shape differs. */
  answer(out: ScannedSets): boolean {
    const b = this.b
    if (!this.punct(123) || this.ws() !== Q) return false
    const k = this.stringEnd(this.i)
    if (k < 0 || decoder.decode(b.subarray(this.i + 1, k)) !== 'return') return false
    this.i = k + 1
    if (!this.punct(COLON) || !this.punct(91) || this.ws() !== 123) return false
    this.i++
    if (this.ws() === 125) this.i++
    else
      for (;;) {
        if (this.ws() !== Q) return false
        const idEnd = this.stringEnd(this.i)
        if (idEnd < 0) return false
        const id = this.stringAt(this.i, idEnd)
        this.i = idEnd + 1
        if (!this.punct(COLON)) return false
        this.ws()
        const start = this.i
        let keys = this.pkgObject()
        if (keys === undefined) {
          // Outside the fast shape: read this one value the slow way.
          const end = skipValue(b, start)
          if (end < 0) return false
          keys = keysOf(parsePkgList(JSON.parse(decoder.decode(b.subarray(start, end)))), this.cat)
          this.i = end
        }
        out.set(id, keys) // a minion given twice: the last value wins, as with JSON.parse
        const c = this.ws()
        this.i++
        if (c === 125) break
        if (c !== COMMA) return false
      }
    // The rest of the return list and the closing brackets must still be well-formed JSON.
    for (;;) {
      const c = this.ws()
      if (c === 93) break
      if (c !== COMMA) return false
      this.i++
      this.ws()
      const end = skipValue(b, this.i)
      if (end < 0) return false
      JSON.parse(decoder.decode(b.subarray(this.i, end))) // ignored, but it must be valid, as with JSON.parse of it all
      this.i = end
    }
    this.i++
    if (!this.punct(125)) return false
    return this.ws() === -1
  }

  /** A package object in the fast shape as key indexes; undefined (position unspecified) when it is not. */
  private pkgObject(): Int32Array | null | undefined {
    const b = this.b
    const cat = this.cat
    if (b[this.i] !== 123) return undefined
    this.i++
    this.n = 0
    const t = ++this.tick
    let c = this.ws()
    if (c === 125) return this.i++, new Int32Array(0)
    for (;;) {
      if (c !== Q) return undefined
      const ns = this.i + 1
      const ne = this.plainEnd(ns)
      if (ne < 0) return undefined
      this.i = ne + 1
      if (!this.punct(COLON)) return undefined
      let name = -1
      c = this.ws()
      if (c === 91) {
        this.i++
        c = this.ws()
        if (c === 93) this.i++
        else
          for (let first = true; ; first = false) {
            if (c !== Q) return undefined
            const vs = this.i + 1
            const ve = this.plainEnd(vs)
            if (ve < 0) return undefined
            if (ve > vs) {
              let k: number
              if (first) {
                // The usual entry: one lookup for the whole `name": ["version` run.
                k = cat.entry(b, ns, ve)
                if (k < 0) cat.setEntry(b, ns, ve, (k = cat.key(cat.name(b, ns, ne), b, vs, ve)))
                name = cat.keyName[k]!
              } else k = cat.key(name < 0 ? (name = cat.name(b, ns, ne)) : name, b, vs, ve)
              this.push(k)
            }
            this.i = ve + 1
            c = this.ws()
            this.i++
            if (c === 93) break
            if (c !== COMMA) return undefined
            c = this.ws()
          }
      } else if (c === Q) {
        // A comma-joined string of versions.
        name = cat.name(b, ns, ne)
        const ve = this.plainEnd(this.i + 1)
        if (ve < 0) return undefined
        let from = this.i + 1
        for (let j = from; j <= ve; j++) {
          if (j < ve && b[j] !== COMMA) continue
          if (j > from) this.push(cat.key(name, b, from, j))
          from = j + 1
        }
        this.i = ve + 1
      } else return undefined
      if (name < 0) name = cat.name(b, ns, ne)
      if (name >= this.nameSeen.length) this.nameSeen = grow32(this.nameSeen, name + 4096)
      // A name given twice: JSON.parse would keep only the last value.
      if (this.nameSeen[name] === t) return undefined
      this.nameSeen[name] = t
      c = this.ws()
      this.i++
      if (c === 125) return this.keys.slice(0, this.n)
      if (c !== COMMA) return undefined
      c = this.ws()
    }
  }

  private push(k: number) {
    if (this.n === this.keys.length) this.keys = grow32(this.keys, this.n * 2)
    this.keys[this.n++] = k
  }

  /** Skips whitespace; returns the next byte (-1 at the end). */
  private ws(): number {
    const b = this.b
    let i = this.i
    while (i < b.length && (b[i] === 32 || b[i] === 10 || b[i] === 13 || b[i] === 9)) i++
    this.i = i
    return i < b.length ? b[i]! : -1
  }

  /** Skips whitespace and one expected byte. */
  private punct(c: number): boolean {
    if (this.ws() !== c) return false
    this.i++
    return true
  }

  /** End (closing quote) of a string whose content starts at s, if it is printable ASCII without escapes; else -1. */
  private plainEnd(s: number): number {
    const b = this.b
    for (let j = s; j < b.length; j++) {
      const c = b[j]!
      if (c === Q) return j
      if (c === BS || c < 0x20 || c > 0x7e) return -1
    }
    return -1
  }

  /** End (closing quote) of any JSON string opening at q; -1 if unterminated. */
  private stringEnd(q: number): number {
    return stringEnd(this.b, q)
  }

  /** The value of the JSON string between quotes q and e. */
  private stringAt(q: number, e: number): string {
    const raw = this.b.subarray(q, e + 1)
    // Escapes and raw control characters (which JSON forbids) go through JSON.parse, so they decode or fail the same.
    return raw.some((c) => c === BS || c < 0x20) ? (JSON.parse(decoder.decode(raw)) as string) : decoder.decode(raw.subarray(1, raw.length - 1))
  }
}

function grow32(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(Math.max(n, a.length * 2))
  next.set(a)
  return next
}

/** End (closing quote) of the JSON string opening at q; -1 if unterminated. */
function stringEnd(b: Uint8Array, q: number): number {
  for (let j = q + 1; j < b.length; j++) {
    if (b[j] === BS) j++
    else if (b[j] === Q) return j
  }
  return -1
}

/** The end (exclusive) of the JSON value starting at s, tracking only strings and nesting; -1 if unbalanced. */
function skipValue(b: Uint8Array, s: number): number {
  let depth = 0
  for (let j = s; j < b.length; j++) {
    const c = b[j]!
    if (c === Q) {
      j = stringEnd(b, j)
      if (j < 0) return -1
      if (depth === 0) return j + 1
    } else if (c === 123 || c === 91) depth++
    else if (c === 125 || c === 93) {
      if (depth === 0) return j
      if (--depth === 0) return j + 1
    } else if (depth === 0 && (c === COMMA || c === 32 || c === 10 || c === 13 || c === 9)) return j
  }
  return depth === 0 ? b.length : -1
}
