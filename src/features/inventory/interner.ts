/** Byte strings interned to dense indexes, for reading salt answers without a JS string per package. */
import { grow, placeSlot, regrow } from '../../lib/slot-table'

/**
 * Interns byte strings under a small integer salt to dense indexes 0, 1, 2, … (open addressing, bytes compared on hit).
 * Lookups are bound by cache misses at fleet scale, so each slot holds the hash beside the index and each entry's
 * start, length and salt sit together: a hit costs about three misses (slot, entry, bytes).
 */
export class ByteInterner {
  private arena = new Uint8Array(1 << 16)
  private used = 0
  /** Per index: start in the arena, length, salt. */
  private meta = new Int32Array(3 * 1024)
  /** Pairs (hash, index + 1); index + 1 = 0 marks an empty slot. */
  private table = new Int32Array(2 * 2048)
  /** A per-process random seed, so a hostile minion cannot precompute names that all collide. */
  private static seed = (Math.random() * 0x7fffffff) | 0
  /** Number of interned strings. */
  size = 0

  /** FNV-1a over the bytes, seeded by the salt. */
  static hash(b: Uint8Array, s: number, e: number, salt: number): number {
    let h = ByteInterner.basis(salt)
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i]!, 0x01000193)
    return ByteInterner.finish(h)
  }

  /** The hash state before the first byte; a caller may feed bytes itself (h = Math.imul(h ^ byte, 0x01000193)). */
  static basis(salt: number): number {
    return (0x811c9dc5 ^ ByteInterner.seed ^ Math.imul(salt, 0x9e3779b1)) | 0
  }

  /** The hash of a fed state. */
  static finish(h: number): number {
    return h ^ (h >>> 15)
  }

  /** The index of bytes b[s, e) under salt with hash h, or -1. */
  find(b: Uint8Array, s: number, e: number, salt: number, h: number): number {
    const table = this.table
    const mask = (table.length >> 1) - 1
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const idx = table[2 * slot + 1]! - 1
      if (idx < 0) return -1
      if (table[2 * slot] !== h) continue
      const meta = this.meta
      if (meta[3 * idx + 1] !== e - s || meta[3 * idx + 2] !== salt) continue
      const arena = this.arena
      let o = meta[3 * idx]!
      let i = s
      while (i < e && arena[o] === b[i]) i++, o++
      if (i === e) return idx
    }
  }

  /** Adds bytes b[s, e) under salt with hash h (the caller checked they are absent); returns the new index. */
  add(b: Uint8Array, s: number, e: number, salt: number, h: number): number {
    const n = e - s
    if (this.used + n > this.arena.length) this.arena = grow(this.arena, this.used + n)
    this.arena.set(b.subarray(s, e), this.used)
    const idx = this.size++
    if (3 * idx + 3 > this.meta.length) this.meta = grow(this.meta, 3 * idx + 3)
    this.meta[3 * idx] = this.used
    this.meta[3 * idx + 1] = n
    this.meta[3 * idx + 2] = salt
    this.used += n
    // Keep the table at most half full so probe runs stay short.
    if (this.size * 2 > this.table.length >> 1) this.table = regrow(this.table, this.table.length)
    placeSlot(this.table, h, idx)
    return idx
  }

  /** The bytes of an interned index. */
  bytes(idx: number): Uint8Array {
    return this.arena.subarray(this.meta[3 * idx]!, this.meta[3 * idx]! + this.meta[3 * idx + 1]!)
  }
}

