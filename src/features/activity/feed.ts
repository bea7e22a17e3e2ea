/** Tells live subscribers (the activity stream) about events just stored, and counts them for /metrics. */
import type { AppDeps } from '../../deps'
import type { EventOut } from './service'
import { idRuns } from './id-runs'

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

/** Announces events that have been committed, here and (by exactly their ids) to every other instance. */
export function publishActivity(deps: AppDeps, events: EventOut[]) {
  if (!events.length) return
  const f = feedOf(deps)
  f.stored += events.length
  for (const runs of idRuns(events.map((e) => e.id))) deps.bus?.publish('activity', runs)
  for (const l of f.listeners) l(events)
}

/** Announces events another instance stored (read back by their ids): this service's streams and watchers see them. */
export function publishStoredElsewhere(deps: AppDeps, events: EventOut[]) {
  if (!events.length) return
  for (const l of feedOf(deps).listeners) l(events)
}

/** Wakes this service's listeners with no events: notices from other instances may have been lost (the bus reconnected), so live streams read again. */
export function activityMayBeMissed(deps: AppDeps) {
  for (const l of feedOf(deps).listeners) l([])
}

/** Activity events stored from salt since start. */
export const activityStored = (deps: AppDeps) => feedOf(deps).stored
