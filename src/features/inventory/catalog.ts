/**
 * The package catalog of one writer: package names and (name, version, arch) keys interned to dense indexes straight
 * from bytes, so a refresh can read a salt answer without creating a JS string per package (only new ones are decoded).
 */

import { EntryCache } from './entry-cache'
import { ByteInterner } from './interner'
import { grow } from '../../lib/slot-table'

const encoder = new TextEncoder()
const decoder = new TextDecoder()
/** Separates version from arch in a key's bytes; 0xFF never occurs in UTF-8, so the split is unambiguous. */
const ARCH_SEP = 0xff

/** Names and keys of packages, each with a dense index; keys also carry their package_keys id once stored (0 before). */
export class PackageCatalog {
  readonly names = new ByteInterner()
  readonly keys = new ByteInterner()
  /** name index → name. */
  readonly nameOf: string[] = []
  /** key index → name index. */
  keyName = new Int32Array(1024)
  /** key index → version, arch. */
  readonly versionOf: string[] = []
  readonly archOf: string[] = []
  /** key index → package_keys.id, 0 while the key is not stored. */
  keyId = new Int32Array(1024)
  /** The keys of a name as a chain: name index → first key index + 1, key index → next key index + 1 (0 ends it). */
  private firstKey = new Int32Array(1024)
  private nextKey = new Int32Array(1024)
  /** package_keys.id → key index + 1 (0: unknown id). */
  private byId = new Int32Array(1024)
  /** Whole `name": ["version` byte runs of an answer → key index, so the usual package entry costs one lookup. */
  private readonly entryCache = new EntryCache()

  /** The key and name indexes cached for several entry runs at once (EntryCache.findMany); -1 where not cached. */
  entries(b: Uint8Array, s: Int32Array, e: Int32Array, h: Int32Array, n: number, keys: Int32Array, names: Int32Array) {
    this.entryCache.findMany(b, s, e, h, n, keys, names)
  }

  /** Caches key index k for the entry run b[s, e). */
  setEntry(b: Uint8Array, s: number, e: number, k: number) {
    this.entryCache.add(b, s, e, k, this.keyName[k]!)
  }

  /** The name index of bytes b[s, e) (UTF-8, no JSON escapes). */
  name(b: Uint8Array, s: number, e: number): number {
    const h = ByteInterner.hash(b, s, e, 0)
    const found = this.names.find(b, s, e, 0, h)
    if (found >= 0) return found
    const idx = this.names.add(b, s, e, 0, h)
    this.nameOf[idx] = decoder.decode(b.subarray(s, e))
    return idx
  }

  /** The key index of name index `name` and version bytes b[s, e) with no arch. */
  key(name: number, b: Uint8Array, s: number, e: number): number {
    const h = ByteInterner.hash(b, s, e, name)
    const found = this.keys.find(b, s, e, name, h)
    if (found >= 0) return found
    const idx = this.keys.add(b, s, e, name, h)
    const sep = b.subarray(s, e).indexOf(ARCH_SEP)
    this.versionOf[idx] = decoder.decode(b.subarray(s, sep < 0 ? e : s + sep))
    this.archOf[idx] = sep < 0 ? '' : decoder.decode(b.subarray(s + sep + 1, e))
    if (idx >= this.keyName.length) {
      this.keyName = grow(this.keyName, idx + 1)
      this.keyId = grow(this.keyId, idx + 1)
      this.nextKey = grow(this.nextKey, idx + 1)
    }
    if (name >= this.firstKey.length) this.firstKey = grow(this.firstKey, name + 1)
    this.keyName[idx] = name
    this.nextKey[idx] = this.firstKey[name]!
    this.firstKey[name] = idx + 1
    return idx
  }

  /** Calls f with every key index of a name. */
  keysOfName(name: number, f: (k: number) => void) {
    for (let k = (this.firstKey[name] ?? 0) - 1; k >= 0; k = this.nextKey[k]! - 1) f(k)
  }

  /** The key index of a (name, version, arch) given as strings. */
  keyOf(name: string, version: string, arch = ''): number {
    const n = encoder.encode(name)
    const v = encoder.encode(version)
    const a = arch ? encoder.encode(arch) : null
    let kb = v
    if (a) {
      kb = new Uint8Array(v.length + 1 + a.length)
      kb.set(v)
      kb[v.length] = ARCH_SEP
      kb.set(a, v.length + 1)
    }
    return this.key(this.name(n, 0, n.length), kb, 0, kb.length)
  }

  /** Records that key index `idx` is stored as package_keys.id `id` (0: no longer stored). */
  setId(idx: number, id: number) {
    const old = this.keyId[idx]!
    if (old) this.byId[old] = 0
    this.keyId[idx] = id
    if (!id) return
    if (id >= this.byId.length) this.byId = grow(this.byId, id + 1)
    this.byId[id] = idx + 1
  }

  /** The key index of a stored package_keys.id, or -1. */
  indexOfId(id: number): number {
    return id < this.byId.length ? this.byId[id]! - 1 : -1
  }

  /** Forgets every stored id (before reloading them from package_keys). */
  clearIds() {
    this.keyId.fill(0)
    this.byId.fill(0)
  }
}
