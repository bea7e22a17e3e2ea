/** The one polling helper of the tests: waits for an effect that crosses a thread, a process or the network. */

/** How long `until` waits in all, and how long it sleeps between looks (ms). */
export interface Patience { ms?: number; every?: number }

/** What `until` reads as "not yet". */
type NotYet = false | 0 | '' | null | undefined

/**
 * Calls `fn` until it returns something truthy and returns that; after `ms` it fails, naming `what` it waited for.
 * The default (3 s, a look every 10 ms) suits the in-process fake salt-api; slower worlds pass their own patience.
 */
export async function until<T>(fn: () => T | Promise<T>, what = 'a condition', { ms = 3000, every = 10 }: Patience = {}): Promise<Exclude<T, NotYet>> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v as Exclude<T, NotYet>
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await Bun.sleep(every)
  }
}
