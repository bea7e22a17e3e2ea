/**
 * Reads a salt-api `pkg.list_pkgs` answer (`{"return": [{minion: {name: [versions]}}]}`) straight from its bytes into
 * catalog key indexes, chunk by chunk as it arrives. JSON.parse of a 50,000-minion fleet's answers alone cost more than
 * the whole refresh budget, so the common shape (plain ASCII names and versions, lists or comma-joined strings) is
 * scanned in place; any minion value outside it (escapes, non-ASCII, {version, arch} objects, errors) is cut out and
 * read by JSON.parse and parsePkgList, and an unusual outer shape is read by JSON.parse whole, so the result is always
 * what JSON.parse would give. Only the unfinished minion of an answer is kept between chunks.
 */
import type { PackageCatalog } from './catalog'
import { ByteInterner } from './interner'
import type { Pkg } from './writer'

const Q = 34 // "
const BS = 92 // \
const COMMA = 44
const COLON = 58
const decoder = new TextDecoder()
/** Scan once this many unread bytes are buffered, so a minion cut by a chunk boundary is rarely scanned twice. */
const DRAIN_AT = 1 << 18

/**
 * What the collector asks pkg.list_pkgs for (contract §8): lists always, and each version's attributes where the
 * minion's pkg module reads `attr` (yumpkg, zypperpkg: `[{epoch, version, release, arch}]`; version alone would drop
 * the RPM release, as salt's format_pkg_list answers the fields apart). aptpkg ignores `attr` and answers lists.
 */
export const LIST_PKGS_KWARG = { versions_as_list: true, attr: ['epoch', 'version', 'release', 'arch'] }

const str = (x: unknown) => (typeof x === 'string' || typeof x === 'number' ? String(x) : '')

/** An attr object's full version as salt writes it without attr (pkg_resource.format_version): `epoch:version-release`. */
function fullVersion(it: Record<string, unknown>): string {
  const epoch = str(it.epoch)
  const release = str(it.release)
  return `${epoch ? `${epoch}:` : ''}${str(it.version)}${release ? `-${release}` : ''}`
}

/** Reads one minion's pkg.list_pkgs value: lists of versions, comma-joined strings, or attr objects ({version, arch, epoch?, release?}). */
export function parsePkgList(v: unknown): Pkg[] | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null
  const out: Pkg[] = []
  for (const [name, val] of Object.entries(v as Record<string, unknown>)) {
    const items = Array.isArray(val) ? val : typeof val === 'string' ? val.split(',') : [val]
    for (const it of items) {
      if (typeof it === 'string' && it) out.push({ name, version: it })
      else if (it && typeof it === 'object' && typeof (it as any).version === 'string')
        out.push({ name, version: fullVersion(it as Record<string, unknown>), arch: typeof (it as any).arch === 'string' ? (it as any).arch : '' })
    }
  }
  return out
}

/** The key indexes of each minion of an answer (null: the value is not a package list); last value wins per minion. */
export type ScannedSets = Map<string, Int32Array | null>

/** Scans a whole answer held in one buffer. */
export function scanPkgAnswer(body: Uint8Array, cat: PackageCatalog): ScannedSets {
  const s = new PkgAnswerScanner(cat)
  s.push(body)
  return s.end()
}

/** Key indexes of parsed package rows. */
function keysOf(list: Pkg[] | null, cat: PackageCatalog): Int32Array | null {
  return list && Int32Array.from(list, (p) => cat.keyOf(p.name, p.version, p.arch ?? ''))
}

/** `answer.return[0]`; an answer without a return list is unreadable, as it is for SaltClient.run. */
function returnOf(answer: unknown, key: 'return'): unknown {
  const r = (answer as Record<string, unknown> | null)?.[key]
  if (r === null || r === undefined) throw new SyntaxError('salt answer without a return')
  return (r as unknown[])[0]
}

/** The sets of return[0] of a parsed answer, as JSON.parse(answer).return[0] gives them. */
function setsOfReturn(ret: unknown, cat: PackageCatalog, out: ScannedSets) {
  out.clear()
  if (ret && typeof ret === 'object' && !Array.isArray(ret))
    for (const [m, v] of Object.entries(ret as Record<string, unknown>)) out.set(m, keysOf(parsePkgList(v), cat))
}

const enum St { Head, Minions, RestList, RestObj, End, Whole }

/** Scans one answer fed with push(); end() returns the sets or throws SyntaxError where JSON.parse would. */
export class PkgAnswerScanner {
  private b: Uint8Array<ArrayBuffer> = new Uint8Array(1 << 16)
  private len = 0
  private i = 0
  /** Everything before this offset is read; the bytes from here on are kept. */
  private kept = 0
  private st = St.Head
  private first = true
  private final = false
  /** A read ran into the end of the bytes received so far (at the very end of the answer: truncated JSON). */
  private short = false
  private readonly sets: ScannedSets = new Map()
  private keys: Int32Array<ArrayBuffer> = new Int32Array(4096)
  private n = 0
  private nameSeen: Int32Array<ArrayBuffer> = new Int32Array(1024)
  private tick = 0
  /** The hash state plainEnd left. */
  private h = 0
  /** Deferred entries: run start and end, hash, name end, version start; then the looked-up key and name indexes. */
  private dS: Int32Array<ArrayBuffer> = new Int32Array(0)
  private dE: Int32Array<ArrayBuffer> = new Int32Array(0)
  private dH: Int32Array<ArrayBuffer> = new Int32Array(0)
  private dNe: Int32Array<ArrayBuffer> = new Int32Array(0)
  private dVs: Int32Array<ArrayBuffer> = new Int32Array(0)
  private dK: Int32Array<ArrayBuffer> = new Int32Array(0)
  private dN: Int32Array<ArrayBuffer> = new Int32Array(0)

  /** `drainAt`: unread bytes that trigger a scan (tests use 1 to scan after every chunk). */
  constructor(private cat: PackageCatalog, private drainAt = DRAIN_AT) {}

  /** Adds the next chunk of the answer. */
  push(chunk: Uint8Array) {
    // The whole-answer fallback needs every byte; otherwise drop what is read once it outweighs what is kept.
    if (this.st !== St.Whole && this.kept > this.len - this.kept) {
      this.b.copyWithin(0, this.kept, this.len)
      this.len -= this.kept
      this.i -= this.kept
      this.kept = 0
    }
    if (this.len + chunk.length > this.b.length) {
      const next = new Uint8Array(Math.max(this.b.length * 2, this.len + chunk.length))
      next.set(this.b.subarray(0, this.len))
      this.b = next
    }
    this.b.set(chunk, this.len)
    this.len += chunk.length
    if (this.len - this.i >= this.drainAt) this.drain()
  }

  /** Reads the rest and returns the sets of every minion in return[0]. */
  end(): ScannedSets {
    this.final = true
    this.drain()
    if (this.st === St.Whole) setsOfReturn(returnOf(JSON.parse(decoder.decode(this.b.subarray(0, this.len))), 'return' as const), this.cat, this.sets)
    return this.sets
  }

  /** Reads complete items until the bytes run out (then waits for more) or the answer ends. */
  private drain() {
    while (this.st !== St.End && this.st !== St.Whole) {
      this.short = false
      const mark = this.i
      this.step()
      if (this.short) {
        if (this.final) throw new SyntaxError('Unexpected end of JSON input')
        this.i = mark
        return
      }
      this.kept = this.i
    }
    if (this.st === St.End) {
      if (this.ws() >= 0) throw new SyntaxError('Unexpected data after the JSON answer')
      this.kept = this.i
    }
  }

  /** Reads one item of the current state. */
  private step() {
    const b = this.b
    switch (this.st) {
      case St.Head: {
        // `{"return": [{`; anything else (or nothing at all) is read by JSON.parse whole.
        if (!this.punct(123) || this.ws() !== Q) return this.unusual()
        const k = this.stringEnd(this.i)
        if (k < 0 || decoder.decode(b.subarray(this.i + 1, k)) !== 'return') return this.unusual()
        this.i = k + 1
        if (!this.punct(COLON) || !this.punct(91) || !this.punct(123)) return this.unusual()
        this.st = St.Minions
        return
      }
      case St.Minions: {
        if (this.ws() === 125) return (this.i++, (this.st = St.RestList))
        const id = this.keyAt(!this.first)
        if (id === null || this.ws() < 0) return
        const start = this.i
        let keys = this.pkgObject()
        if (this.short) return
        if (keys === undefined) {
          // Outside the fast shape: read this one value the slow way.
          const end = this.skipValue(start)
          if (end < 0) return
          keys = keysOf(parsePkgList(JSON.parse(decoder.decode(b.subarray(start, end)))), this.cat)
          this.i = end
        }
        this.sets.set(id, keys) // a minion given twice: the last value wins, as with JSON.parse
        this.first = false
        return
      }
      case St.RestList: {
        // Further elements of the return list are ignored, but must be valid JSON, as with JSON.parse of it all.
        const c = this.ws()
        if (c === 93) return (this.i++, (this.st = St.RestObj))
        if (c !== COMMA) return this.bad(c)
        this.i++
        this.value()
        return
      }
      case St.RestObj: {
        // Further keys of the answer; a second "return" replaces the first, as JSON.parse keeps the last.
        if (this.ws() === 125) return (this.i++, (this.st = St.End))
        const key = this.keyAt(true)
        if (key === null) return
        const v = this.value()
        if (key === 'return' && !this.short) setsOfReturn(returnOf({ return: v }, 'return'), this.cat, this.sets)
        return
      }
    }
  }

  /** Reads one complete JSON value through JSON.parse. */
  private value(): unknown {
    if (this.ws() < 0) return
    const end = this.skipValue(this.i)
    if (end < 0) return
    const v = JSON.parse(decoder.decode(this.b.subarray(this.i, end)))
    this.i = end
    return v
  }

  /** The head is not the usual one: keep every byte for JSON.parse (unless more bytes may still make it usual). */
  private unusual() {
    if (!this.short) this.st = St.Whole
  }

  /** An unexpected byte after the head is a syntax error (or, at the end of the bytes so far, a wait for more). */
  private bad(c: number) {
    if (c < 0 || this.short) return
    throw new SyntaxError(`Unexpected character in JSON answer at ${this.i}`)
  }

  /**
   * A package object in the fast shape as key indexes; undefined (position unspecified) when it is not. Entries with
   * one version (nearly all) are looked up together at the end of the object as whole `name": ["version` runs, so the
   * catalog's memory loads overlap; the others are looked up as they come.
   */
  private pkgObject(): Int32Array | null | undefined {
    const b = this.b
    const cat = this.cat
    if (b[this.i] !== 123) return undefined
    this.i++
    this.n = 0
    let d = 0 // deferred entries
    const t = ++this.tick
    let c = this.ws()
    if (c === 125) return this.i++, new Int32Array(0)
    for (;;) {
      if (c !== Q) return undefined
      const ns = this.i + 1
      // The name's bytes are hashed while they are checked, for the entry lookup.
      const ne = this.plainEnd(ns, ByteInterner.basis(0))
      if (ne < 0) return undefined
      let h = this.h
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
            if (first) for (let j = ne; j < vs; j++) h = Math.imul(h ^ b[j]!, 0x01000193)
            const ve = this.plainEnd(vs, h)
            if (ve < 0) return undefined
            this.i = ve + 1
            c = this.ws()
            this.i++
            if (first && c === 93 && ve > vs) {
              // `"name": ["version"]`: deferred to the joint lookup.
              if (d === this.dS.length) this.growDeferred()
              this.dS[d] = ns
              this.dE[d] = ve
              this.dH[d] = ByteInterner.finish(this.h)
              this.dNe[d] = ne
              this.dVs[d++] = vs
              name = -2
              break
            }
            if (ve > vs) this.addKey(cat.key(name < 0 ? (name = cat.name(b, ns, ne)) : name, b, vs, ve))
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
          if (j > from) this.addKey(cat.key(name, b, from, j))
          from = j + 1
        }
        this.i = ve + 1
      } else return undefined
      if (name !== -2 && !this.firstName(name < 0 ? cat.name(b, ns, ne) : name, t)) return undefined
      c = this.ws()
      this.i++
      if (c === 125) break
      if (c !== COMMA) return undefined
      c = this.ws()
    }
    if (d > this.dK.length) (this.dK = new Int32Array(this.dS.length)), (this.dN = new Int32Array(this.dS.length))
    cat.entries(b, this.dS, this.dE, this.dH, d, this.dK, this.dN)
    for (let j = 0; j < d; j++) {
      let k = this.dK[j]!
      let name = this.dN[j]!
      if (k < 0) {
        name = cat.name(b, this.dS[j]!, this.dNe[j]!)
        cat.setEntry(b, this.dS[j]!, this.dE[j]!, (k = cat.key(name, b, this.dVs[j]!, this.dE[j]!)))
      }
      if (!this.firstName(name, t)) return undefined
      this.addKey(k)
    }
    return this.keys.slice(0, this.n)
  }

  /** Marks a name seen in the current object; false when it was already (JSON.parse would keep only the last value). */
  private firstName(name: number, t: number): boolean {
    if (name >= this.nameSeen.length) this.nameSeen = grow32(this.nameSeen, name + 4096)
    if (this.nameSeen[name] === t) return false
    this.nameSeen[name] = t
    return true
  }

  private growDeferred() {
    const n = Math.max(1024, this.dS.length * 2)
    this.dS = grow32(this.dS, n)
    this.dE = grow32(this.dE, n)
    this.dH = grow32(this.dH, n)
    this.dNe = grow32(this.dNe, n)
    this.dVs = grow32(this.dVs, n)
  }

  private addKey(k: number) {
    if (this.n === this.keys.length) this.keys = grow32(this.keys, this.n * 2)
    this.keys[this.n++] = k
  }

  /** Skips whitespace; returns the next byte, or -1 at the end of the bytes so far (noted as short). */
  /** Reads `"key":` at i, after a comma when `comma`; the key, or null when the input is short or bad (reported). */
  private keyAt(comma: boolean): string | null {
    let c = this.ws()
    if (comma) {
      if (c !== COMMA) return (this.bad(c), null)
      this.i++
      c = this.ws()
    }
    if (c !== Q) return (this.bad(c), null)
    const end = this.stringEnd(this.i)
    if (end < 0) return null
    const key = this.stringAt(this.i, end)
    this.i = end + 1
    if (!this.punct(COLON)) return (this.bad(this.ws()), null)
    return key
  }

  private ws(): number {
    const b = this.b
    const len = this.len
    let i = this.i
    while (i < len && (b[i] === 32 || b[i] === 10 || b[i] === 13 || b[i] === 9)) i++
    this.i = i
    if (i < len) return b[i]!
    this.short = true
    return -1
  }

  /** Skips whitespace and one expected byte. */
  private punct(c: number): boolean {
    if (this.ws() !== c) return false
    this.i++
    return true
  }

  /**
   * End (closing quote) of a string whose content starts at s, if it is printable ASCII without escapes; else -1.
   * Feeds the content to the hash state h on the way (ByteInterner's FNV) and leaves it in this.h.
   */
  private plainEnd(s: number, h = 0): number {
    const b = this.b
    const len = this.len
    for (let j = s; j < len; j++) {
      const c = b[j]!
      if (c === Q) return (this.h = h), j
      if (c === BS || c < 0x20 || c > 0x7e) return -1
      h = Math.imul(h ^ c, 0x01000193)
    }
    this.short = true
    return -1
  }

  /** End (closing quote) of the JSON string opening at q; -1 if it is not complete yet. */
  private stringEnd(q: number): number {
    const b = this.b
    for (let j = q + 1; j < this.len; j++) {
      if (b[j] === BS) j++
      else if (b[j] === Q) return j
    }
    this.short = true
    return -1
  }

  /** The value of the JSON string between quotes q and e. */
  private stringAt(q: number, e: number): string {
    const raw = this.b.subarray(q, e + 1)
    // Escapes and raw control characters (which JSON forbids) go through JSON.parse, so they decode or fail the same.
    return raw.some((c) => c === BS || c < 0x20) ? (JSON.parse(decoder.decode(raw)) as string) : decoder.decode(raw.subarray(1, raw.length - 1))
  }

  /** The end (exclusive) of the JSON value starting at s, tracking only strings and nesting; -1 if not complete yet. */
  private skipValue(s: number): number {
    const b = this.b
    let depth = 0
    for (let j = s; j < this.len; j++) {
      const c = b[j]!
      if (c === Q) {
        j = this.stringEnd(j)
        if (j < 0) return -1
        if (depth === 0) return j + 1
      } else if (c === 123 || c === 91) depth++
      else if (c === 125 || c === 93) {
        if (depth === 0) return j
        if (--depth === 0) return j + 1
      } else if (depth === 0 && (c === COMMA || c === 32 || c === 10 || c === 13 || c === 9)) return j
    }
    // A number or literal may go on in the next chunk; at the very end it ends there.
    if (depth === 0 && this.final) return this.len
    this.short = true
    return -1
  }
}

function grow32(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(Math.max(n, a.length * 2))
  next.set(a)
  return next
}
