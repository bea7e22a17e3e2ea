/** GET /api/activity/stream: SSE of new activity with the list's filters and visibility, replay from Last-Event-ID, keepalives. */
import type { AppDeps } from '../../deps'
import type { Grant } from '../roles/service'
import { eventsAfter, lastEventId, type ActivityFilter } from './service'
import { onActivity } from './feed'

/** Milliseconds between keepalive comments: well inside the server's idle timeout (server.ts IDLE_TIMEOUT_S, 30 s). */
export const KEEPALIVE_MS = 10_000

const enc = new TextEncoder()
/** Open subscribers per service, so a graceful stop can end them (an SSE response never finishes by itself). */
const open = new WeakMap<AppDeps, Set<() => void>>()

/** Ends every open activity stream of a service; browsers reconnect to the next process and replay by id. */
export function closeActivityStreams(deps: AppDeps) {
  for (const end of [...(open.get(deps) ?? [])]) end()
}
const frame = (e: { id: number }) => enc.encode(`id: ${e.id}\nevent: activity\ndata: ${JSON.stringify(e)}\n\n`)

/** Opens the stream for one subscriber. New events are read back with the same SQL filter as the list, so both agree. */
export function activityStream(deps: AppDeps, filter: ActivityFilter, grants: Grant[], afterId: number | null, keepaliveMs = KEEPALIVE_MS): Response {
  let last = afterId ?? lastEventId(deps)
  let stop = () => {}
  const body = new ReadableStream<Uint8Array>({
    start(ctl) {
      const pump = () => {
        try {
          for (;;) {
            const batch = eventsAfter(deps, filter, grants, last)
            for (const e of batch) ctl.enqueue(frame(e))
            if (batch.length) last = batch.at(-1)!.id
            if (batch.length < 500) break
          }
        } catch {
          stop()
        }
      }
      ctl.enqueue(enc.encode('retry: 3000\n\n'))
      pump()
      const unsubscribe = onActivity(deps, pump)
      const keepalive = setInterval(() => {
        try {
          ctl.enqueue(enc.encode(': keepalive\n\n'))
        } catch {
          stop()
        }
      }, keepaliveMs)
      const subs = open.get(deps) ?? new Set()
      open.set(deps, subs)
      const end = () => {
        stop()
        try {
          ctl.close()
        } catch {
          // Already closed by the client.
        }
      }
      subs.add(end)
      stop = () => {
        unsubscribe()
        clearInterval(keepalive)
        subs.delete(end)
      }
    },
    cancel: () => stop(),
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } })
}
