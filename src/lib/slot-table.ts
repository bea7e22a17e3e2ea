/** Open-addressing tables of (hash, value + 1) Int32 pairs with linear probing; 0 in the value slot marks a free slot. */

/** Puts `value` under hash `h` into the first free slot at or after the hash's home slot. */
export function placeSlot(table: Int32Array, h: number, value: number) {
  const mask = (table.length >> 1) - 1
  let slot = h & mask
  while (table[2 * slot + 1]) slot = (slot + 1) & mask
  table[2 * slot] = h
  table[2 * slot + 1] = value + 1
}

/** A new table of `slots` slots (a power of two) holding every entry of `old`. */
export function regrow(old: Int32Array, slots: number): Int32Array<ArrayBuffer> {
  const table = new Int32Array(2 * slots)
  for (let j = 0; j < old.length; j += 2) if (old[j + 1]) placeSlot(table, old[j]!, old[j + 1]! - 1)
  return table
}

/** A copy of a typed array with room for at least n elements. */
export function grow<T extends Int32Array | Uint8Array>(a: T, n: number): T {
  const next = new (a.constructor as new (n: number) => T)(Math.max(n, a.length * 2))
  next.set(a)
  return next
}
