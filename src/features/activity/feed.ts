/** Tells live subscribers (the activity stream) about events just stored, and counts them for /metrics. */
import type { AppDeps } from '../../deps'
import type { EventOut } from './service'

interface Feed {
  listeners: Set<(events: EventOut[]) => void>
  /** Events published since start, from the stream and the pollers alike. */
  stored: number
}

const feeds = new WeakMap<AppDeps, Feed>()
const feedOf = (deps: AppDeps): Feed => {
  let f = feeds.get(deps)
  if (!f) feeds.set(deps, (f = { listeners: new Set(), stored: 0 }))
  return f
}

/** Subscribes to stored events; returns the unsubscribe function. */
export function onActivity(deps: AppDeps, fn: (events: EventOut[]) => void): () => void {
  const f = feedOf(deps)
  f.listeners.add(fn)
  return () => void f.listeners.delete(fn)
}

/** Announces events that have been committed. */
export function publishActivity(deps: AppDeps, events: EventOut[]) {
  if (!events.length) return
  const f = feedOf(deps)
  f.stored += events.length
  for (const l of f.listeners) l(events)
}

/** Activity events stored from salt since start. */
export const activityStored = (deps: AppDeps) => feedOf(deps).stored
