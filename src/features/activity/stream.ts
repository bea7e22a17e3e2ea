/** GET /api/activity/stream: SSE of new activity with the list's filters and visibility, replay from Last-Event-ID, keepalives. */
import type { AppDeps } from '../../deps'
import type { Grant } from '../roles/service'
import { authVersion, sessionStanding } from '../auth/service'
import { onAuthChange } from '../auth/changes'
import { eventsAfter, streamCursor, visibleCategories, type ActivityFilter, type StreamCursor } from './service'
import { onActivity } from './feed'

/** Milliseconds between keepalive comments: well inside the server's idle timeout (server.ts IDLE_TIMEOUT_S, 30 s). */
export const KEEPALIVE_MS = 10_000

/**
 * Milliseconds between a stream's checks that its session or token still stands. Changes made in this process close
 * the stream at once (auth/changes.ts); this check is the backstop for changes from another process (the CLI's
 * reset-password) and for the session's expiry, and keeps a revoked stream open 2 s at most.
 */
export const RECHECK_MS = 2_000

/** How a stream is kept: keepalive and recheck periods; `sessionId` ties it to the credential that opened it. */
export interface StreamOptions {
  keepaliveMs?: number
  recheckMs?: number
  /** The session or API token the stream was opened with; it ends when that credential does. */
  sessionId?: string
}

/**
 * How soon a stream whose next events wait behind an older open transaction (PostgreSQL) reads again, first and at
 * most: that transaction may store no event of its own, so no notice would wake the stream when it ends.
 */
export const HELD_RETRY_MS = { first: 100, max: 2_000 }

const enc = new TextEncoder()
/** Open subscribers per service, so a graceful stop can end them (an SSE response never finishes by itself). */
const open = new WeakMap<AppDeps, Set<() => void>>()

/** Ends every open activity stream of a service; browsers reconnect to the next process and replay by id. */
export function closeActivityStreams(deps: AppDeps) {
  for (const end of [...(open.get(deps) ?? [])]) end()
}
const frame = (e: { id: number }) => enc.encode(`id: ${e.id}\nevent: activity\ndata: ${JSON.stringify(e)}\n\n`)

/** Opens the stream for one subscriber. New events are read back with the same SQL filter as the list, so both agree. */
export function activityStream(deps: AppDeps, filter: ActivityFilter, grants: Grant[], afterId: number | null, opts: StreamOptions = {}): Response {
  const { keepaliveMs = KEEPALIVE_MS, recheckMs = RECHECK_MS, sessionId } = opts
  // Set before the first read (start below): where the stream stands in the store's order.
  let cursor: StreamCursor = { id: afterId ?? 0, xid: null }
  let stop = () => {}
  // A read again while events are held back, backing off to HELD_RETRY_MS.max; reset once they come.
  let retry: ReturnType<typeof setTimeout> | null = null
  let retryMs = HELD_RETRY_MS.first
  let stopped = false
  const body = new ReadableStream<Uint8Array>({
    async start(ctl) {
      // One read at a time, in the store's order (store.ts eventsAfterCursor): events published while a read is under way ask for another after it.
      let pumping = false
      let again = false
      const pump = async () => {
        if (pumping) return void (again = true)
        pumping = true
        try {
          do {
            again = false
            for (;;) {
              const r = await eventsAfter(deps, filter, grants, cursor)
              if (stopped) return
              for (const e of r.events) ctl.enqueue(frame(e))
              cursor = r.next
              if (r.events.length) retryMs = HELD_RETRY_MS.first
              if (r.held && !retry) {
                retry = setTimeout(() => {
                  retry = null
                  void pump()
                }, retryMs)
                retryMs = Math.min(retryMs * 2, HELD_RETRY_MS.max)
              }
              if (!r.more) break
            }
          } while (again)
        } catch {
          stop()
        } finally {
          pumping = false
        }
      }
      const end = () => {
        stop()
        try {
          ctl.close()
        } catch {
          // Already closed by the client.
        }
      }
      // The credential's standing as last read: the stream ends when it ends, and follows its grants while it stands.
      // Set by the first recheck (at the end of start), before which any tick rechecks.
      let version = -1
      let expiresAt: number | null = null
      const checkNow = async () => {
        if (!sessionId) return
        version = await authVersion(deps)
        const now = await sessionStanding(deps, sessionId)
        // A user who could see some activity and no longer sees any (a role taken away) has nothing left to stream.
        if (!now || (visibleCategories(grants).length > 0 && visibleCategories(now.grants).length === 0)) return end()
        grants = now.grants
        expiresAt = now.expiresAt
      }
      const checkTick = async () => {
        if (!sessionId) return
        if ((await authVersion(deps)) !== version || (expiresAt !== null && expiresAt <= deps.clock.now())) await checkNow()
      }
      // A standing that cannot be read (the database failing) ends the stream: the client reconnects and authenticates anew.
      const recheck = () => void checkNow().catch(end)
      const tick = () => void checkTick().catch(end)
      cursor = await streamCursor(deps, afterId)
      // Cancelled while the newest id was read: nothing is subscribed yet.
      if (stopped) return
      ctl.enqueue(enc.encode('retry: 3000\n\n'))
      // Subscribed before the first read: an event committed in between has a higher id, and that read takes it.
      const unsubscribe = onActivity(deps, () => void pump())
      const unwatch = onAuthChange(deps, recheck)
      const keepalive = setInterval(() => {
        try {
          ctl.enqueue(enc.encode(': keepalive\n\n'))
        } catch {
          stop()
        }
      }, keepaliveMs)
      const rechecking = setInterval(tick, recheckMs)
      const subs = open.get(deps) ?? new Set()
      open.set(deps, subs)
      subs.add(end)
      stop = () => {
        stopped = true
        unsubscribe()
        unwatch()
        clearInterval(keepalive)
        clearInterval(rechecking)
        if (retry) clearTimeout(retry)
        subs.delete(end)
      }
      recheck()
      await pump()
    },
    cancel: () => {
      stopped = true
      stop()
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } })
}
