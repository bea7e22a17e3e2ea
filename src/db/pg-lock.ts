/**
 * Leadership among instances sharing one PostgreSQL database: a session advisory lock held on a connection reserved
 * for it, for the work on several instances (one of them runs the pollers). The lock lives as long as that session:
 * when the connection drops (the server restarted, the connection was killed, the network went), PostgreSQL frees it
 * and another instance may take it, so the holder must hear of the loss at once and stop acting as leader. On SQLite
 * there is one instance per database: leadership is always granted and never lost.
 */
import type { Engine } from './engine'

/** A leadership held: `release` gives it up (unlocks and returns the connection to the pool). */
export interface Leadership {
  release(): Promise<void>
}

/**
 * Tries to take the session advisory lock `key` (any integer all instances agree on) without waiting: a Leadership
 * when taken, null when another session holds it. While held, `onLost` is called once if the lock's connection drops
 * or stops answering: at once when the pool sees one of its connections close (the lock's connection is then asked
 * whether it is still the same session), and otherwise within `checkMs` by a probe every `checkMs` (default 5 s) that
 * must answer within `checkMs`. After a loss the connection is closed, never reused: a session that merely stopped
 * answering could otherwise still hold the lock while another instance believes it free.
 */
export async function tryLeadership(db: Engine, key: number, onLost: (why: Error) => void, opts: { checkMs?: number } = {}): Promise<Leadership | null> {
  const n = db.native
  if (n.engine === 'sqlite') return { release: async () => {} }
  const conn = await n.client.reserve()
  let pid: number
  try {
    const [r] = await conn.unsafe('SELECT pg_try_advisory_lock($1::int8) AS ok, pg_backend_pid() AS pid', [key])
    if (!r.ok) {
      await conn.release()
      return null
    }
    pid = r.pid
  } catch (e) {
    await conn.release().catch(() => {})
    throw e
  }
  const checkMs = opts.checkMs ?? 5_000
  let over = false
  let probing: Promise<void> | null = null
  const end = () => {
    over = true
    clearInterval(timer)
    n.onClose.delete(onPoolClose)
  }
  const lost = (why: Error) => {
    if (over) return
    end()
    conn.close().catch(() => {})
    onLost(why)
  }
  // The same session still answering: a new pid would be a new session, which holds no lock.
  const probe = () => {
    probing ??= (async () => {
      let t: Timer | undefined
      try {
        const answer = conn.unsafe('SELECT pg_backend_pid() AS pid').execute()
        const late = new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`the leadership's connection did not answer within ${checkMs} ms`)), checkMs)))
        const [r] = await Promise.race([answer, late])
        if (r.pid !== pid) lost(new Error('the leadership\'s connection was replaced by a new session'))
      } catch (e) {
        lost(e instanceof Error ? e : new Error(String(e)))
      } finally {
        clearTimeout(t)
        probing = null
      }
    })()
  }
  const onPoolClose = () => {
    if (!over) probe()
  }
  n.onClose.add(onPoolClose)
  const timer = setInterval(probe, checkMs)
  timer.unref?.()
  return {
    release: async () => {
      if (over) return
      end()
      try {
        await conn.unsafe('SELECT pg_advisory_unlock($1::int8)', [key])
        await conn.release()
      } catch {
        // The session is gone, and its lock with it.
        await conn.close().catch(() => {})
      }
    },
  }
}
