/**
 * PostgreSQL's side of the cluster module (src/cluster/), in one file so it can move onto other driver primitives:
 * NOTIFY through the engine (in a transaction it is delivered on commit), LISTEN on the driver's own listening
 * connection, and session advisory locks held on one connection of each instance's own.
 */
import postgres, { type Sql } from 'postgres'
import { sql } from './sql'
import type { Db } from './client'

/** The advisory lock class of leadership locks (the second key is hashtext of the lock's name); migrations use another. */
export const LEADER_LOCK_CLASS = 0x5a17dec1

/** Sends `payload` on `channel` (NOTIFY): to listeners at once, or when the transaction `q` runs in commits. */
export async function pgNotify(db: Pick<Db, 'exec'>, channel: string, payload: string) {
  await db.exec(sql`SELECT pg_notify(${channel}, ${payload})`)
}

/**
 * Listens on `channel` on the driver's listening connection, which reconnects by itself; `onListen` is called on each
 * (re)connect. Resolves with the unlisten function.
 */
export async function pgListen(client: Sql, channel: string, fn: (payload: string) => void, onListen: () => void): Promise<() => Promise<void>> {
  const meta = await client.listen(channel, fn, onListen)
  return async () => {
    await meta.unlisten()
  }
}

/**
 * Leadership locks of one instance: session advisory locks on one connection of its own (a lock lives as long as its
 * session; several names share it). Its own client of one connection, not a connection reserved from the pool:
 * postgres.js never answers a query on a reserved connection the server ended (and throws outside it), while a pool
 * of one opens a new session for the next query. `alive` asks the server whether the current session holds the lock,
 * so a connection cut, and the quiet reconnect after it, read as lost. Every statement gives up after `timeoutMs`.
 */
export function pgLocks(url: string, timeoutMs = 2000) {
  const conn = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: Math.ceil(timeoutMs / 1000) })
  const bounded = <T>(p: Promise<T>): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<never>((_, no) => (timer = setTimeout(() => no(new Error('the lock connection did not answer')), timeoutMs)))
    return Promise.race([p, late]).finally(() => clearTimeout(timer))
  }
  return {
    /** Takes `name` without waiting: true when this instance holds it now. */
    async tryLock(name: string): Promise<boolean> {
      const r = await bounded(conn.unsafe<{ ok: boolean }[]>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [LEADER_LOCK_CLASS, name]))
      return r[0]?.ok === true
    },
    /** Whether this instance's session still holds `name` (false when the connection is gone or does not answer). */
    async alive(name: string): Promise<boolean> {
      try {
        const r = await bounded(conn.unsafe<{ held: boolean }[]>(
          `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::oid AND objid = hashtext($2)::oid
             AND objsubid = 2 AND pid = pg_backend_pid() AND granted) AS held`, [LEADER_LOCK_CLASS, name]))
        return r[0]?.held === true
      } catch {
        return false
      }
    },
    /** Gives `name` back (nothing to do when the session is gone: the lock went with it). */
    async release(name: string) {
      await bounded(conn.unsafe('SELECT pg_advisory_unlock($1, hashtext($2))', [LEADER_LOCK_CLASS, name])).catch(() => {})
    },
    /** Closes the lock connection: whatever it still held is released with its session. */
    async close() {
      await conn.end({ timeout: 2 }).catch(() => {})
    },
  }
}
