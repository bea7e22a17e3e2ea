/**
 * PostgreSQL's side of the cluster module (src/cluster/), in one file over the engine's primitives: NOTIFY and LISTEN
 * (db/pg-notify.ts: in a transaction a notification goes out on commit; the listening connection reconnects by
 * itself) and leadership locks (db/pg-lock.ts: session advisory locks on one reserved connection, lost when it drops).
 */
import { sql } from './sql'
import type { Engine, Queryable } from './engine'
import { listen, notify } from './pg-notify'
import { tryLeadership } from './pg-lock'

/**
 * The high 32 bits of a leadership lock's key (pg_locks' classid); the low 32 bits are hashtext of the lock's name
 * (its objid). Kept small so the whole key stays a safe JavaScript integer; migrations lock another key.
 */
export const LEADER_LOCK_CLASS = 0x5a17

/** How often a held lock's connection is probed between the pool's close signals. */
const LOCK_CHECK_MS = 2000

/** Sends `payload` on `channel` (NOTIFY): to listeners at once, or when the transaction `q` runs in commits. */
export async function pgNotify(q: Queryable, channel: string, payload: string) {
  await notify(q, channel, payload)
}

/** Listens on `channel`; `onListen` is called on each (re)connect. Resolves with the unlisten function. */
export function pgListen(db: Engine, channel: string, fn: (payload: string) => void, onListen: () => void): Promise<() => Promise<void>> {
  return listen(db, channel, fn, onListen)
}

/** Leadership locks of one instance, by name: all held on one session, a connection reserved from the pool (pg-lock.ts). */
export function pgLocks(db: Engine) {
  return {
    /** Takes `name` without waiting: null when another instance holds it; `alive` turns false once it is lost. */
    async tryLock(name: string): Promise<{ alive(): Promise<boolean>; release(): Promise<void> } | null> {
      const h = (await db.row<{ h: number }>(sql`SELECT hashtext(${name}) AS h`))!.h
      let lost = false
      const held = await tryLeadership(db, LEADER_LOCK_CLASS * 2 ** 32 + (h >>> 0), () => (lost = true), { checkMs: LOCK_CHECK_MS })
      return held ? { alive: async () => !lost, release: () => held.release() } : null
    },
  }
}
