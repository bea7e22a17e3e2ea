/**
 * The holder index: which minions hold each package key, as chunked bitmaps over minion numbers (the rowid of a
 * minion's package-set row). The writer applies each flush's changes; version queries and the vulnerability matcher
 * read it instead of scanning every minion's set.
 */
import type { Database } from 'bun:sqlite'

/** Minion numbers per chunk row. */
export const CHUNK = 4096
const CHUNK_BYTES = CHUNK / 8
/** Below this many holders a chunk is stored as sorted uint16 offsets (2 bytes each), which is smaller than the bitmap. */
const ARRAY_MAX = 255

/** The package_keys ids of a stored set blob (little-endian uint32). */
export function decodeKeyIds(blob: Uint8Array): Uint32Array {
  if (blob.byteOffset % 4 === 0) return new Uint32Array(blob.buffer, blob.byteOffset, blob.byteLength >> 2)
  return new Uint32Array(blob.slice().buffer)
}

/** Sets the chunk's holders into a 512-byte bitmap. */
function decodeChunk(bits: Uint8Array, into: Uint8Array) {
  if (bits.byteLength === CHUNK_BYTES) return into.set(bits)
  into.fill(0)
  for (let i = 0; i + 1 < bits.byteLength; i += 2) {
    const o = bits[i]! | (bits[i + 1]! << 8)
    into[o >> 3]! |= 1 << (o & 7)
  }
}

/** A chunk's bitmap in its stored form (array or bitmap); null when it holds nobody. */
function encodeChunk(map: Uint8Array): Uint8Array | null {
  let n = 0
  for (let i = 0; i < CHUNK_BYTES; i++) n += POP[map[i]!]!
  if (!n) return null
  if (n > ARRAY_MAX) return map.slice()
  const out = new Uint8Array(n * 2)
  let j = 0
  for (let i = 0; i < CHUNK_BYTES; i++) {
    let b = map[i]!
    while (b) {
      const bit = 31 - Math.clz32(b & -b)
      const o = i * 8 + bit
      out[j++] = o & 255
      out[j++] = o >> 8
      b &= b - 1
    }
  }
  return out
}

/** Set bits per byte value. */
const POP = new Uint8Array(256).map((_, i) => {
  let n = 0
  for (let b = i; b; b &= b - 1) n++
  return n
})

/** Holder changes of one flush, applied to package_holders per (key, chunk) in one read and one write each. */
export class HolderChanges {
  /** (key id × 2^20 + chunk) → offsets, +o+1 added, −(o+1) removed, in the order they happened. */
  private byChunk = new Map<number, number[]>()
  private queued = 0

  /** Changes are written to `db` once a million are queued (bounding memory on a first full refresh) and by apply(). */
  constructor(private db: Database) {}

  /** Records that minion number `num` now holds key `keyId`. */
  add(keyId: number, num: number) {
    this.push(keyId, num, 1)
  }

  /** Records that minion number `num` no longer holds key `keyId`. */
  remove(keyId: number, num: number) {
    this.push(keyId, num, -1)
  }

  private push(keyId: number, num: number, sign: number) {
    const k = keyId * 2 ** 20 + Math.floor(num / CHUNK)
    let list = this.byChunk.get(k)
    if (!list) this.byChunk.set(k, (list = []))
    list.push(sign * ((num % CHUNK) + 1))
    if (++this.queued >= 1_000_000) this.apply()
  }

  /** Writes every changed chunk (inside the caller's transaction). */
  apply() {
    const db = this.db
    this.queued = 0
    if (!this.byChunk.size) return
    const get = db.query<{ bits: Uint8Array }, [number, number]>('SELECT bits FROM package_holders WHERE key_id = ?1 AND chunk = ?2')
    const put = db.query('INSERT INTO package_holders (key_id, chunk, bits) VALUES (?1, ?2, ?3) ON CONFLICT (key_id, chunk) DO UPDATE SET bits = excluded.bits')
    const del = db.query('DELETE FROM package_holders WHERE key_id = ?1 AND chunk = ?2')
    const map = new Uint8Array(CHUNK_BYTES)
    for (const [k, list] of this.byChunk) {
      const keyId = Math.floor(k / 2 ** 20)
      const chunk = k % 2 ** 20
      const old = get.get(keyId, chunk)
      if (old) decodeChunk(old.bits, map)
      else map.fill(0)
      for (const c of list) {
        const o = Math.abs(c) - 1
        if (c > 0) map[o >> 3]! |= 1 << (o & 7)
        else map[o >> 3]! &= ~(1 << (o & 7))
      }
      const bits = encodeChunk(map)
      if (bits) put.run(keyId, chunk, bits)
      else if (old) del.run(keyId, chunk)
    }
    this.byChunk.clear()
  }
}

/** A bitmap over minion numbers 0 … words × 32 − 1. */
export type MinionBits = Uint32Array

/** An empty bitmap wide enough for every minion number stored now. */
export function emptyBits(db: Database): MinionBits {
  const max = db.query<{ m: number | null }, []>('SELECT max(rowid) AS m FROM minion_package_sets').get()?.m ?? 0
  return new Uint32Array(Math.ceil((max + 1) / CHUNK) * (CHUNK / 32))
}

/** ORs the holders of key `keyId` into `into` (which emptyBits sized; chunks beyond it are ignored). */
export function orHolders(db: Database, keyId: number, into: MinionBits) {
  const map = new Uint8Array(CHUNK_BYTES)
  const words = new Uint32Array(map.buffer)
  for (const r of db.query<{ chunk: number; bits: Uint8Array }, [number]>('SELECT chunk, bits FROM package_holders WHERE key_id = ?1').iterate(keyId)) {
    const base = r.chunk * (CHUNK / 32)
    if (base >= into.length) continue
    decodeChunk(r.bits, map)
    for (let i = 0; i < words.length; i++) into[base + i]! |= words[i]!
  }
}

/** Whether minion number `num` is set. */
export const hasBit = (b: MinionBits, num: number) => num >> 5 < b.length && (b[num >> 5]! >>> (num & 31)) & 1

/** Sets minion number `num` (the bitmap must be wide enough). */
export const setBit = (b: MinionBits, num: number) => {
  if (num >> 5 < b.length) b[num >> 5]! |= 1 << (num & 31)
}

/** Number of set bits. */
export function countBits(b: MinionBits): number {
  let n = 0
  for (let i = 0; i < b.length; i++) {
    let v = b[i]!
    v = v - ((v >>> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
    n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
  }
  return n
}

/** Minion numbers in minion-id order, with each number's id and set source; rebuilt when the sets' generation moves. */
export interface MinionOrder {
  generation: number
  /** Minion numbers sorted by minion id. */
  nums: Int32Array
  /** Minion number → id and source (sparse). */
  ids: string[]
  sources: string[]
}

let order: MinionOrder | null = null
let orderDb: Database | null = null

/** The minions with a stored package set, in id order (cached per inventory generation). */
export function minionOrder(db: Database): MinionOrder {
  const generation = db.query<{ g: number }, []>('SELECT generation AS g FROM package_key_generation WHERE id = 1').get()?.g ?? 0
  if (order && orderDb === db && order.generation === generation) return order
  const rows = db.query<[number, string, string], []>('SELECT rowid, minion_id, source FROM minion_package_sets ORDER BY minion_id').values() as [number, string, string][]
  const nums = new Int32Array(rows.length)
  const ids: string[] = []
  const sources: string[] = []
  rows.forEach(([n, id, src], i) => {
    nums[i] = n
    ids[n] = id
    sources[n] = src
  })
  orderDb = db
  return (order = { generation, nums, ids, sources })
}

/** Rebuilds the whole index from the stored sets (an install that kept sets from before the index existed). */
export function rebuildHolders(db: Database) {
  db.transaction(() => {
    db.run('DELETE FROM package_holders')
    const changes = new HolderChanges(db)
    for (const r of db.query<{ num: number; keys: Uint8Array }, []>('SELECT rowid AS num, keys FROM minion_package_sets ORDER BY rowid').iterate()) {
      for (const id of decodeKeyIds(r.keys)) changes.add(id, r.num)
    }
    changes.apply()
  })()
}

/** Builds the index when sets are stored but no holder is (once, after the upgrade that added it). */
export function ensureHolders(db: Database): boolean {
  if (db.query('SELECT 1 FROM package_holders LIMIT 1').get()) return false
  if (!db.query('SELECT 1 FROM minion_package_sets WHERE length(keys) > 0 LIMIT 1').get()) return false
  rebuildHolders(db)
  return true
}
