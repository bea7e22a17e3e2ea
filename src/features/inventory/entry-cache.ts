/**
 * Whole `name": ["version` byte runs of salt answers → key index. Lookups at fleet scale are bound by memory misses, so
 * each entry is one 64-byte record holding its length, key index and up to 48 bytes inline: a hit costs the table slot
 * and the record, about two misses. Longer runs are not cached (the caller looks the name and version up instead).
 */
import { ByteInterner } from './interner'
import { grow, placeSlot, regrow } from '../../lib/slot-table'

const STRIDE = 16
/** The longest run kept inline. */
export const ENTRY_MAX = 48

/** An open-addressing table of (hash, record + 1) pairs over records [length, key index, name index, unused, bytes × 12 words]. */
export class EntryCache {
  private rec = new Int32Array(STRIDE * 1024)
  private table = new Int32Array(2 * 2048)
  private size = 0

  /** The record cached for b[s, e) with hash h (ByteInterner.hash, salt 0), or -1. */
  find(b: Uint8Array, s: number, e: number, h: number): number {
    const table = this.table
    const mask = (table.length >> 1) - 1
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const r = table[2 * slot + 1]! - 1
      if (r < 0) return -1
      if (table[2 * slot] === h && this.matches(r, b, s, e)) return r
    }
  }

  /**
   * Looks up runs i < n (b[s[i], e[i]) with hash h[i]) together: first every home slot, then every record, so the
   * memory loads of different runs do not wait on each other. Writes key and name indexes, or -1 for a miss.
   */
  findMany(b: Uint8Array, s: Int32Array, e: Int32Array, h: Int32Array, n: number, keys: Int32Array, names: Int32Array) {
    const table = this.table
    const rec = this.rec
    const mask = (table.length >> 1) - 1
    for (let i = 0; i < n; i++) {
      const slot = h[i]! & mask
      keys[i] = table[2 * slot] === h[i] ? table[2 * slot + 1]! - 1 : -2
    }
    for (let i = 0; i < n; i++) {
      let r = keys[i]!
      if (r < 0 || !this.matches(r, b, s[i]!, e[i]!)) r = r === -1 ? -1 : this.find(b, s[i]!, e[i]!, h[i]!)
      keys[i] = r < 0 ? -1 : rec[r * STRIDE + 1]!
      names[i] = r < 0 ? -1 : rec[r * STRIDE + 2]!
    }
  }

  /** Whether record r holds exactly b[s, e). */
  private matches(r: number, b: Uint8Array, s: number, e: number): boolean {
    const rec = this.rec
    const n = e - s
    const o = r * STRIDE
    if (rec[o] !== n) return false
    let w = o + 4
    let j = 0
    for (; j + 4 <= n; j += 4, w++) if ((b[s + j]! | (b[s + j + 1]! << 8) | (b[s + j + 2]! << 16) | (b[s + j + 3]! << 24)) !== rec[w]) return false
    return j === n || tail(b, s + j, e) === rec[w]
  }

  /** Caches key index k (of name index name) for b[s, e) (ignored when the run is longer than ENTRY_MAX). */
  add(b: Uint8Array, s: number, e: number, k: number, name: number) {
    const n = e - s
    if (n > ENTRY_MAX) return
    const r = this.size++
    if ((r + 1) * STRIDE > this.rec.length) this.rec = grow(this.rec, (r + 1) * STRIDE)
    const o = r * STRIDE
    this.rec[o] = n
    this.rec[o + 1] = k
    this.rec[o + 2] = name
    let w = o + 4
    let j = 0
    for (; j + 4 <= n; j += 4, w++) this.rec[w] = b[s + j]! | (b[s + j + 1]! << 8) | (b[s + j + 2]! << 16) | (b[s + j + 3]! << 24)
    if (j < n) this.rec[w] = tail(b, s + j, e)
    // Keep the table at most half full so probe runs stay short.
    if (this.size * 2 > this.table.length >> 1) this.table = regrow(this.table, this.table.length)
    placeSlot(this.table, ByteInterner.hash(b, s, e, 0), r)
  }
}

/** The last 1–3 bytes of a run as one little-endian word. */
function tail(b: Uint8Array, s: number, e: number): number {
  let x = 0
  for (let t = 0; s + t < e; t++) x |= b[s + t]! << (8 * t)
  return x
}
