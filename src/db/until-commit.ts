/** Values a store reads on every request but that change only with a commit: kept until the engine's commit epoch moves. */
import type { Engine } from './engine'

/**
 * `read` as a function of the engine, read again only once something has been committed since its last reading
 * (engine.ts commitEpoch); on an engine that cannot tell, read every time. A commit between taking the epoch and the
 * read leaves the value newer than its epoch, so it is read once more at the next call, never kept stale.
 */
export function untilCommit<T>(read: (db: Engine) => Promise<T>): (db: Engine) => Promise<T> {
  // One mechanism: the per-key form with a single key.
  const kept = untilCommitBy((db, _: null) => read(db), 1)
  return (db) => kept(db, null)
}

/** `untilCommit` per key: each key's value kept until the next commit, at most `max` keys between two commits. */
export function untilCommitBy<K, T>(read: (db: Engine, key: K) => Promise<T>, max = 1024): (db: Engine, key: K) => Promise<T> {
  const kept = new WeakMap<Engine, { epoch: number; values: Map<K, T> }>()
  return async (db, key) => {
    const epoch = db.commitEpoch()
    if (epoch === null) return read(db, key)
    let k = kept.get(db)
    if (!k || k.epoch !== epoch) kept.set(db, (k = { epoch, values: new Map() }))
    if (k.values.has(key)) return k.values.get(key)!
    const value = await read(db, key)
    // Kept under the epoch taken before the read (a newer value under an older epoch is read again at the next call).
    if (k.values.size < max) k.values.set(key, value)
    return value
  }
}
