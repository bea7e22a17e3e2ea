/**
 * Leadership among instances sharing one PostgreSQL database: session advisory locks, for the work on several
 * instances (one of them runs the pollers). A lock lives as long as its session: when the connection drops (the server
 * restarted, the connection was killed, the network went), PostgreSQL frees it and another instance may take it, so the
 * holder must hear of the loss at once and stop acting as leader. An instance's locks share one session, a connection
 * reserved from the pool while it holds any: a connection per lock took the pool's 10 connections from the requests of
 * an instance leading many salt sources. On SQLite there is one instance per database: leadership is always granted
 * and never lost.
 */
import type { Engine } from './engine'

/** A leadership held: `release` gives it up (unlocks; the last one held returns the connection to the pool). */
export interface Leadership {
  release(): Promise<void>
}

type Native = Extract<Engine['native'], { engine: 'postgres' }>
type Reserved = Awaited<ReturnType<Native['client']['reserve']>>

/** One pool's lock session: its connection, its backend, and the held locks with what to tell each when it is lost. */
interface Session {
  conn: Reserved
  pid: number
  held: Map<number, { onLost: (why: Error) => void; checkMs: number }>
  over: boolean
  timer?: Timer
  checkMs: number
  probing: Promise<void> | null
  /** Asks the session whether it is still the same one answering; a loss otherwise. */
  probe: () => void
  onPoolClose: () => void
}

/** The open session of each pool, and the queue its operations run in (one at a time, in order). */
const sessions = new Map<object, Session>()
const queues = new Map<object, Promise<unknown>>()

/** Runs `fn` after the pool's earlier lock operations: opening, taking, releasing and ending never interleave. */
function serial<T>(pool: object, fn: () => Promise<T>): Promise<T> {
  const next = (queues.get(pool) ?? Promise.resolve()).then(fn, fn)
  queues.set(pool, next.catch(() => {}))
  return next
}

/** Ends a session that was lost: every holder hears it once; its connection is closed, never reused. */
function lose(n: Native, s: Session, why: Error) {
  if (s.over) return
  end(n, s)
  s.conn.close().catch(() => {})
  for (const h of s.held.values()) h.onLost(why)
  s.held.clear()
}

/** Stops watching a session and forgets it. */
function end(n: Native, s: Session) {
  s.over = true
  clearInterval(s.timer)
  n.onClose.delete(s.onPoolClose)
  if (sessions.get(n.client) === s) sessions.delete(n.client)
}

/** Probes every `s.checkMs` (the shortest any holder asked for). */
function schedule(s: Session) {
  clearInterval(s.timer)
  s.timer = setInterval(s.probe, s.checkMs)
  s.timer.unref?.()
}

/** The pool's session, opened (a connection reserved) when there is none. */
async function sessionOf(n: Native, checkMs: number): Promise<Session> {
  const open = sessions.get(n.client)
  if (open && !open.over) return open
  const conn = await n.client.reserve()
  let pid: number
  try {
    pid = (await conn.unsafe('SELECT pg_backend_pid() AS pid'))[0].pid
  } catch (e) {
    await conn.release().catch(() => {})
    throw e
  }
  const s: Session = { conn, pid, held: new Map(), over: false, checkMs, probing: null, probe: () => {}, onPoolClose: () => {} }
  // The same session still answering: a new pid would be a new session, which holds no lock.
  const probe = () => {
    if (s.over) return
    s.probing ??= (async () => {
      let t: Timer | undefined
      try {
        const answer = conn.unsafe('SELECT pg_backend_pid() AS pid').execute()
        const late = new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`the leadership's connection did not answer within ${s.checkMs} ms`)), s.checkMs)))
        const [r] = await Promise.race([answer, late])
        if (r.pid !== pid) lose(n, s, new Error("the leadership's connection was replaced by a new session"))
      } catch (e) {
        lose(n, s, e instanceof Error ? e : new Error(String(e)))
      } finally {
        clearTimeout(t)
        s.probing = null
      }
    })()
  }
  s.probe = probe
  s.onPoolClose = () => probe()
  n.onClose.add(s.onPoolClose)
  schedule(s)
  sessions.set(n.client, s)
  return s
}

/**
 * Tries to take the session advisory lock `key` (any integer all instances agree on) without waiting: a Leadership
 * when taken, null when another session holds it, or this instance already does (a session's locks stack, so the
 * instance keeps count itself). While held, `onLost` is called once if the session's connection drops or stops
 * answering: at once when the pool sees one of its connections close (the session is then asked whether it is still
 * the same), and otherwise within `checkMs` by a probe every `checkMs` (default 5 s; the shortest any holder asked
 * for) that must answer within it. After a loss the connection is closed, never reused: a session that merely stopped
 * answering could otherwise still hold its locks while another instance believes them free.
 */
export async function tryLeadership(db: Engine, key: number, onLost: (why: Error) => void, opts: { checkMs?: number } = {}): Promise<Leadership | null> {
  const n = db.native
  if (n.engine === 'sqlite') return { release: async () => {} }
  const checkMs = opts.checkMs ?? 5_000
  const taken = await serial(n.client, async () => {
    const s = await sessionOf(n, checkMs)
    if (s.held.has(key)) return null
    let ok: boolean
    try {
      ok = (await s.conn.unsafe('SELECT pg_try_advisory_lock($1::int8) AS ok', [key]))[0].ok
    } catch (e) {
      lose(n, s, e instanceof Error ? e : new Error(String(e)))
      throw e
    }
    if (!ok) {
      // Nothing held on it: the connection goes back to the pool.
      if (!s.held.size) await close(n, s)
      return null
    }
    s.held.set(key, { onLost, checkMs })
    if (checkMs < s.checkMs) {
      s.checkMs = checkMs
      schedule(s)
    }
    return s
  })
  if (!taken) return null
  let released = false
  return {
    release: () =>
      serial(n.client, async () => {
        if (released || taken.over || !taken.held.has(key)) return
        released = true
        taken.held.delete(key)
        try {
          await taken.conn.unsafe('SELECT pg_advisory_unlock($1::int8)', [key])
          if (!taken.held.size) await close(n, taken)
        } catch {
          // The session is gone, and its locks with it: the others hear it from the probe.
          lose(n, taken, new Error("the leadership's connection failed while giving a lock back"))
        }
      }),
  }
}

/** Ends a session holding nothing: its connection back to the pool. */
async function close(n: Native, s: Session) {
  end(n, s)
  await s.conn.release().catch(() => s.conn.close().catch(() => {}))
}
