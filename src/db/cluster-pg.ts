/**
 * PostgreSQL's side of the cluster module (src/cluster/), in one file so it can move onto other driver primitives:
 * NOTIFY through the engine (in a transaction it is delivered on commit), LISTEN on the driver's own listening
 * connection, and session advisory locks held on one reserved connection per instance.
 */
import type { ReservedSql, Sql } from 'postgres'
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
 * Leadership locks of one instance: session advisory locks on one reserved connection (a lock lives as long as its
 * session; several names share the connection). `alive` asks the server whether this connection's session still
 * holds the lock, so a connection cut (and a driver's quiet reconnect to a new session) reads as lost.
 */
export function pgLocks(client: Sql) {
  let conn: Promise<ReservedSql> | null = null
  const reserved = () => (conn ??= client.reserve().catch((e) => {
    conn = null
    throw e
  }))
  const holds = async (name: string) => {
    const c = await reserved()
    const r = await c.unsafe<{ held: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::oid AND objid = hashtext($2)::oid
         AND objsubid = 2 AND pid = pg_backend_pid() AND granted) AS held`, [LEADER_LOCK_CLASS, name])
    return r[0]?.held === true
  }
  /** A connection that failed is given back and a new one reserved at the next try. */
  const dropOnError = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p
    } catch (e) {
      const c = conn
      conn = null
      void c?.then((x) => x.release()).catch(() => {})
      throw e
    }
  }
  return {
    /** Takes `name` without waiting: true when this instance holds it now. */
    async tryLock(name: string): Promise<boolean> {
      return dropOnError((async () => {
        const c = await reserved()
        const r = await c.unsafe<{ ok: boolean }[]>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [LEADER_LOCK_CLASS, name])
        return r[0]?.ok === true
      })())
    },
    /** Whether this instance's session still holds `name` (false when the connection is gone). */
    async alive(name: string): Promise<boolean> {
      try {
        return await dropOnError(holds(name))
      } catch {
        return false
      }
    },
    /** Gives `name` back (nothing to do when the session is gone: the lock went with it). */
    async release(name: string) {
      await dropOnError((async () => {
        const c = await reserved()
        await c.unsafe('SELECT pg_advisory_unlock($1, hashtext($2))', [LEADER_LOCK_CLASS, name])
      })()).catch(() => {})
    },
    /** Gives the reserved connection back to the pool (its locks go with its session's end... or stay until then). */
    async close() {
      const c = conn
      conn = null
      if (c) (await c.catch(() => null))?.release()
    },
  }
}
