/** Values a store reads on every request but that change only with a commit: kept until the engine's commit epoch moves. */
import type { Engine } from './engine'

/**
 * `read` as a function of the engine, read again only once something has been committed since its last reading
 * (engine.ts commitEpoch); on an engine that cannot tell, read every time. A commit between taking the epoch and the
 * read leaves the value newer than its epoch, so it is read once more at the next call, never kept stale.
 */
export function untilCommit<T>(read: (db: Engine) => Promise<T>): (db: Engine) => Promise<T> {
  const kept = new WeakMap<Engine, { epoch: number; value: T }>()
  return async (db) => {
    const epoch = db.commitEpoch()
    if (epoch === null) return read(db)
    const k = kept.get(db)
    if (k && k.epoch === epoch) return k.value
    const value = await read(db)
    kept.set(db, { epoch, value })
    return value
  }
}
