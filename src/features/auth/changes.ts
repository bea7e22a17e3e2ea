/** In-process news that credentials or grants changed, so open streams recheck at once instead of at their next tick. */
import type { AppDeps } from '../../deps'

const listeners = new WeakMap<AppDeps, Set<() => void>>()

/** Subscribes to credential and grant changes of this service; returns the unsubscribe function. */
export function onAuthChange(deps: AppDeps, fn: () => void): () => void {
  let set = listeners.get(deps)
  if (!set) listeners.set(deps, (set = new Set()))
  set.add(fn)
  return () => void set.delete(fn)
}

/**
 * Tells subscribers that sessions, tokens, users, roles or grants changed. They hear it after the current synchronous
 * work (a microtask), so a change made inside a transaction is read back committed, or not at all when it rolled back.
 */
export function authChanged(deps: AppDeps) {
  // Other instances' open streams recheck at once too (their requests read auth_version and need no news).
  deps.bus?.publish('auth')
  authChangedElsewhere(deps)
}

/** Tells this service's subscribers of a change another instance made (news from the cluster bus). */
export function authChangedElsewhere(deps: AppDeps) {
  const set = listeners.get(deps)
  if (!set?.size) return
  queueMicrotask(() => {
    for (const fn of [...set]) fn()
  })
}
