/**
 * A soft memory limit for the serving process. JavaScriptCore sizes its heap for the machine's RAM and collects late,
 * so the garbage of thousands of JSON answers a second lifts RSS well above what the process holds; when RSS passes
 * the limit, the guard asks for a full collection, which gives it back. The collection runs on JavaScriptCore's
 * collector thread (`Bun.gc(false)`): a synchronous one (`Bun.gc(true)`) stopped serving for 40-100 ms at a time, the
 * slowest requests of the 60-second pause benchmark (bench/RESULTS.md, session 12).
 */

/** How the guard reads RSS and asks for a collection (this process's, unless a test gives its own). */
export interface MemoryProbe {
  rss(): number
  collect(): void
}
const PROCESS: MemoryProbe = { rss: () => process.memoryUsage.rss(), collect: () => Bun.gc(false) }

/** The longest wait between checks while collections do not bring RSS under the limit. */
const MAX_BACKOFF_MS = 30_000

/**
 * Checks RSS every `everyMs` and asks for a full collection when it is above `softLimitBytes`, telling `onCollect`
 * how long the request held the thread; returns a stop function. The collection finishes in the background, so it is
 * judged at the next check: still above the limit then (the process really holds that much, as during a burst of
 * events), the wait doubles, up to 30 s, as a collection that does not help only costs.
 */
export function startMemoryGuard(softLimitBytes: number, onCollect: (seconds: number) => void, everyMs = 500, probe: MemoryProbe = PROCESS): () => void {
  let wait = everyMs
  let collected = false
  let timer: ReturnType<typeof setTimeout>
  const check = () => {
    if (probe.rss() > softLimitBytes) {
      // Above the limit again right after a collection: that one did not help.
      wait = collected ? Math.min(wait * 2, MAX_BACKOFF_MS) : everyMs
      const t0 = performance.now()
      probe.collect()
      onCollect((performance.now() - t0) / 1000)
      collected = true
    } else {
      wait = everyMs
      collected = false
    }
    timer = setTimeout(check, wait)
    // Never what keeps the process alive.
    timer.unref()
  }
  timer = setTimeout(check, wait)
  timer.unref()
  return () => clearTimeout(timer)
}
