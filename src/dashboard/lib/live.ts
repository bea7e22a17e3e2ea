/** Following the activity stream to keep a page current without polling (the live job page, the Jobs list). */
import { useEffect, useRef, useState } from 'preact/hooks'
import { qs } from './api'

/** The stream's state as a page tells it. */
export type LiveState = 'off' | 'connecting' | 'live' | 'reconnecting' | 'closed'

/** Milliseconds a burst of events (a job returning from many minions) is gathered into one reload. */
const GATHER_MS = 200

/**
 * Hook: while `filter` is not null, follows `GET /api/activity/stream` with that filter and calls `onChange` once per
 * burst of events, and once each time the stream (re)opens, so nothing that happened between the page's load and the
 * connection is missed. The stream ends with the session that opened it (server side), and with the page.
 */
export function useActivityReload(filter: Record<string, string | undefined> | null, onChange: () => void): LiveState {
  const [state, setState] = useState<LiveState>('off')
  const cb = useRef(onChange)
  cb.current = onChange
  const key = filter ? qs(filter) : null
  useEffect(() => {
    if (key === null) return setState('off')
    const es = new EventSource(`/api/activity/stream${key}`)
    setState('connecting')
    let timer: ReturnType<typeof setTimeout> | undefined
    const soon = () => {
      timer ??= setTimeout(() => {
        timer = undefined
        cb.current()
      }, GATHER_MS)
    }
    es.addEventListener('activity', soon)
    es.onopen = () => {
      setState('live')
      soon()
    }
    es.onerror = () => setState(es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting')
    return () => {
      es.close()
      if (timer) clearTimeout(timer)
    }
  }, [key])
  return state
}
