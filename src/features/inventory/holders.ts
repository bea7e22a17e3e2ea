/**
 * The holder index: which minions hold each package key, as chunked bitmaps over minion numbers (the rowid of a
 * minion's package-set row). The writer applies each flush's changes; version queries and the vulnerability matcher
 * read it instead of scanning every minion's set.
 */
import type { Engine, Queryable } from '../../db/engine'
import { grow } from '../../lib/slot-table'
import { anyHeldSet, anyHolder, clearHolders, holderChunk, maxKeyId, maxSetNum, setKeysAfter, setsByMinion, type HolderRow } from './holder-store'
import { currentGeneration } from './package-store'
import type { HolderIo } from './flush-io'
import { twin } from '../../db/engine'
import { sqliteHolderIo } from './flush-sqlite'
import { postgresHolderIo } from './flush-postgres'

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

/** Time spent writing holder chunks since start, in ms, and the chunk rows written (for the inventory benchmark). */
export const holderTiming = { totalMs: 0, rows: 0 }

/** One chunk's pending changes: per key id a slot (a typed index, no JS object per key), each slot two bitmaps. */
class ChunkChanges {
  /** key id → slot + 1. */
  slot: Int32Array
  /** Slot → key id, and its bitmaps: minions added at [0, 512), removed at [512, 1024). */
  keyOf: number[] = []
  bits: Uint8Array[] = []

  constructor(maxKeyId: number) {
    this.slot = new Int32Array(maxKeyId + 1024)
  }

  /** The bitmaps of a key's slot, made on first use. */
  slotOf(keyId: number): Uint8Array {
    if (keyId >= this.slot.length) this.slot = grow(this.slot, keyId + 1)
    const s = this.slot[keyId]!
    if (s) return this.bits[s - 1]!
    const b = new Uint8Array(2 * CHUNK_BYTES)
    this.bits.push(b)
    this.keyOf.push(keyId)
    this.slot[keyId] = this.bits.length
    return b
  }
}

/**
 * Holder changes of one flush, gathered as bitmaps per (chunk, key) and applied to package_holders with one range
 * read per chunk and one write per changed row. A flush stores minions in number order, so consecutive changes hit
 * the same chunk.
 */
export class HolderChanges {
  private chunks = new Map<number, ChunkChanges>()
  private lastChunk = -1
  private last: ChunkChanges | null = null
  private entries = 0

  /** Changes are written to `q` (the flush's transaction) by apply(); `full` asks for it once 200,000 chunk rows are pending (bounding memory). */
  private constructor(private q: Queryable, private maxKeyId: number) {}

  /** Changes to be written to `q`, sized by its highest key id. */
  static async open(q: Queryable): Promise<HolderChanges> {
    return new HolderChanges(q, await maxKeyId(q))
  }

  /** Whether enough is pending that the caller should apply() before adding more. */
  get full() {
    return this.entries >= 200_000
  }

  /** Records that minion number `num` now holds key `keyId`. */
  add(keyId: number, num: number) {
    this.mark(keyId, num, 0, CHUNK_BYTES)
  }

  /** Records that minion number `num` no longer holds key `keyId`. */
  remove(keyId: number, num: number) {
    this.mark(keyId, num, CHUNK_BYTES, 0)
  }

  /** Sets the bit in the half at `setAt` and clears it in the half at `clearAt`: the later change of a (key, minion) wins. */
  private mark(keyId: number, num: number, setAt: number, clearAt: number) {
    const c = Math.floor(num / CHUNK)
    let cc = this.last
    if (c !== this.lastChunk || !cc) {
      cc = this.chunks.get(c) ?? null
      if (!cc) this.chunks.set(c, (cc = new ChunkChanges(this.maxKeyId)))
      this.last = cc
      this.lastChunk = c
    }
    const before = cc.bits.length
    const b = cc.slotOf(keyId)
    const off = num % CHUNK
    b[setAt + (off >> 3)]! |= 1 << (off & 7)
    b[clearAt + (off >> 3)]! &= ~(1 << (off & 7))
    if (cc.bits.length !== before) this.entries++
  }

  /** Writes every changed chunk (inside the caller's transaction). */
  async apply() {
    const t0 = performance.now()
    const io = twin(this.q, { sqlite: sqliteHolderIo, postgres: postgresHolderIo })(this.q)
    const map = new Uint8Array(CHUNK_BYTES)
    for (const [chunk, cc] of this.chunks) applyChunkRows(io, chunk, cc, await io.rows(chunk, cc.keyOf), map)
    await io.settle()
    this.chunks.clear()
    this.last = null
    this.lastChunk = -1
    this.entries = 0
    holderTiming.totalMs += performance.now() - t0
  }
}

/** Writes one chunk's changed rows from its stored ones (only those this flush changes are kept). */
function applyChunkRows(io: HolderIo, chunk: number, cc: ChunkChanges, rows: HolderRow[], map: Uint8Array) {
  const stored = new Map<number, Uint8Array>()
  for (const r of rows) if (r.key_id < cc.slot.length && cc.slot[r.key_id]) stored.set(r.key_id, r.bits)
  for (let sl = 0; sl < cc.bits.length; sl++) {
    const keyId = cc.keyOf[sl]!
    const old = stored.get(keyId)
    if (old) decodeChunk(old, map)
    else map.fill(0)
    const b = cc.bits[sl]!
    for (let i = 0; i < CHUNK_BYTES; i++) map[i] = (map[i]! | b[i]!) & ~b[CHUNK_BYTES + i]!
    const bits = encodeChunk(map)
    holderTiming.rows++
    if (bits) io.put(chunk, keyId, bits)
    else if (old) io.drop(chunk, keyId)
  }
}

/** A bitmap over minion numbers 0 … words × 32 − 1. */
export type MinionBits = Uint32Array

/** An empty bitmap wide enough for every minion number stored now. */
export async function emptyBits(q: Queryable): Promise<MinionBits> {
  const max = await maxSetNum(q)
  return new Uint32Array(Math.ceil((max + 1) / CHUNK) * (CHUNK / 32))
}

/** Calls `fn` with each stored chunk of a key among the first `chunks`, as a 512-byte bitmap (reused between calls). */
async function eachChunk(q: Queryable, keyId: number, chunks: number, fn: (chunk: number, map: Uint8Array) => void) {
  const map = new Uint8Array(CHUNK_BYTES)
  const get = holderChunk(q)
  for (let chunk = 0; chunk < chunks; chunk++) {
    const r = await get.get<Pick<HolderRow, 'bits'>>(chunk, keyId)
    if (!r) continue
    decodeChunk(r.bits, map)
    fn(chunk, map)
  }
}

/** ORs the holders of key `keyId` into `into` (which emptyBits sized; chunks beyond it are ignored). */
export async function orHolders(q: Queryable, keyId: number, into: MinionBits) {
  await eachChunk(q, keyId, into.length / (CHUNK / 32), (chunk, map) => {
    const words = new Uint32Array(map.buffer)
    const base = chunk * (CHUNK / 32)
    for (let i = 0; i < words.length; i++) into[base + i]! |= words[i]!
  })
}

/** The first holder of a key, in minion-number order, that `ok` accepts; null when none does. */
export async function firstHolder(q: Queryable, keyId: number, chunks: number, ok: (num: number) => boolean): Promise<number | null> {
  let found: number | null = null
  await eachChunk(q, keyId, chunks, (chunk, map) => {
    for (let i = 0; i < CHUNK_BYTES && found === null; i++)
      for (let b = map[i]!; b && found === null; b &= b - 1) {
        const num = chunk * CHUNK + i * 8 + (31 - Math.clz32(b & -b))
        if (ok(num)) found = num
      }
  })
  return found
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

/** Minion numbers in minion-id order, with each number's id, rank and set source; rebuilt when the sets' generation moves. */
export interface MinionOrder {
  generation: number
  /** Minion numbers sorted by minion id. */
  nums: Int32Array
  /** Minion number → its position in `nums` (−1: no set). */
  rank: Int32Array
  /** Minion number → id and source ('' where no set). */
  ids: string[]
  sources: string[]
  /** The minions of each set source, as a bitmap. */
  bySource: Map<string, MinionBits>
  /** Minion number → the salt source its set came through ('' where no set). */
  saltSources: string[]
  /** The minions of each salt source (master), as a bitmap. */
  bySaltSource: Map<string, MinionBits>
}

let order: MinionOrder | null = null
let orderDb: unknown = null

/** The minions with a stored package set, in id order (cached per inventory generation and native connection). */
export async function minionOrder(q: Engine): Promise<MinionOrder> {
  const generation = await currentGeneration(q)
  if (order && orderDb === q.native.client && order.generation === generation) return order
  const rows = (await setsByMinion(q)).map((r) => [r.num, r.minion_id, r.source, r.salt_source] as [number, string, string, string])
  const max = rows.reduce((m, [n]) => Math.max(m, n), 0)
  const nums = new Int32Array(rows.length)
  const rank = new Int32Array(max + 1).fill(-1)
  // Filled dense arrays (not holes by rowid): reading them is on every version query's path.
  const ids = new Array<string>(max + 1).fill('')
  const sources = new Array<string>(max + 1).fill('')
  const bySource = new Map<string, MinionBits>()
  const saltSources = new Array<string>(max + 1).fill('')
  const bySaltSource = new Map<string, MinionBits>()
  const words = Math.ceil((max + 1) / CHUNK) * (CHUNK / 32)
  rows.forEach(([n, id, src, salt], i) => {
    nums[i] = n
    rank[n] = i
    ids[n] = id
    sources[n] = src
    saltSources[n] = salt
    let m = bySource.get(src)
    if (!m) bySource.set(src, (m = new Uint32Array(words)))
    setBit(m, n)
    let s = bySaltSource.get(salt)
    if (!s) bySaltSource.set(salt, (s = new Uint32Array(words)))
    setBit(s, n)
  })
  orderDb = q.native.client
  return (order = { generation, nums, rank, ids, sources, bySource, saltSources, bySaltSource })
}

/**
 * One page of rows (minion, set) over several minion bitmaps, in minion-id order then set order: the total by
 * popcount; a small result sorted by rank from its bits, a large one walked in id order only up to the page's end.
 */
export function pageRows(o: MinionOrder, sets: MinionBits[], offset: number, limit: number): { total: number; rows: [num: number, set: number][] } {
  let total = 0
  for (const b of sets) total += countBits(b)
  const end = Math.min(total, offset + limit)
  const rows: [number, number][] = []
  if (offset >= end) return { total, rows }
  if (total <= 8192) {
    const all: [number, number, number][] = []
    sets.forEach((b, si) => {
      for (let w = 0; w < b.length; w++) {
        let v = b[w]!
        while (v) {
          const bit = 31 - Math.clz32(v & -v)
          const num = w * 32 + bit
          if (num < o.rank.length && o.rank[num]! >= 0) all.push([o.rank[num]!, si, num])
          v &= v - 1
        }
      }
    })
    all.sort((a, b) => a[0] - b[0] || a[1] - b[1])
    for (let i = offset; i < end && i < all.length; i++) rows.push([all[i]![2], all[i]![1]])
    return { total, rows }
  }
  let seen = 0
  for (let i = 0; i < o.nums.length && seen < end; i++) {
    const num = o.nums[i]!
    for (let si = 0; si < sets.length && seen < end; si++) {
      if (!hasBit(sets[si]!, num)) continue
      if (seen >= offset) rows.push([num, si])
      seen++
    }
  }
  return { total, rows }
}

/** Rebuilds the whole index from the stored sets (an install that kept sets from before the index existed). */
export async function rebuildHolders(db: Engine) {
  await db.tx(async (tx) => {
    await clearHolders(tx)
    const changes = await HolderChanges.open(tx)
    // A page of sets at a time, so the sets are never all in memory.
    for (let after = -1; ; ) {
      const page = await setKeysAfter(tx, after, 1000)
      if (!page.length) break
      for (const r of page) for (const id of decodeKeyIds(r.keys)) changes.add(id, r.num)
      after = page[page.length - 1]!.num
      if (changes.full) await changes.apply()
    }
    await changes.apply()
  })
}

/** Builds the index when sets are stored but no holder is (once, after the upgrade that added it). */
export async function ensureHolders(db: Engine): Promise<boolean> {
  if (await anyHolder(db)) return false
  if (!(await anyHeldSet(db))) return false
  await rebuildHolders(db)
  return true
}
