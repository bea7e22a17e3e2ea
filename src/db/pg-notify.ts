/**
 * Notifications between instances sharing one PostgreSQL database (LISTEN/NOTIFY), for the work on several instances:
 * one instance's write tells the others to look. On SQLite there is one instance per database, so there is nobody
 * to tell: `listen` hears nothing and `notify` sends nothing.
 */
import { sql } from './sql'
import type { Engine, Queryable } from './engine'

/** Stops a `listen`; resolves once the channel is no longer subscribed. */
export type Unlisten = () => Promise<void>

/**
 * Calls `onPayload` with each notification on `channel` (an identifier, at most 63 bytes). Bun.sql keeps one
 * connection of its own for every listen of the pool and, when that connection drops, reconnects with backoff and
 * subscribes again; `onListen` runs each time the subscription is acknowledged (at first and after each reconnect),
 * so a caller can re-read what it may have missed while the connection was down. Notifications sent while it was down
 * are lost: PostgreSQL keeps none for a session that is gone.
 */
export async function listen(db: Engine, channel: string, onPayload: (payload: string) => void, onListen: () => void = () => {}): Promise<Unlisten> {
  const n = db.native
  if (n.engine === 'sqlite') return async () => {}
  const sub = await n.client.listen(channel, onPayload, onListen)
  return () => sub.unlisten()
}

/**
 * Sends `payload` (at most 7,999 bytes) on `channel` through `q`: on the engine at once, in a transaction at its
 * commit (and never, if it rolls back), which is what makes "the row is written, tell the others" one unit. PostgreSQL
 * folds identical notifications of one transaction into one.
 */
export async function notify(q: Queryable, channel: string, payload = ''): Promise<void> {
  if (q.engine === 'sqlite') return
  await q.exec(sql`SELECT pg_notify(${channel}, ${payload})`)
}
