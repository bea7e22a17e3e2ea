/**
 * A soft memory limit for the serving process. JavaScriptCore sizes its heap for the machine's RAM and collects late,
 * so the garbage of thousands of JSON answers a second lifts RSS well above what the process holds; when RSS passes
 * the limit, a full collection gives it back. Measured at 50,000 minions (bench/RESULTS.md, issue 14): peak RSS of the
 * read benchmark 162 -> 149 MB, throughput unchanged within noise.
 */

/** How the guard reads RSS and collects (this process's, unless a test gives its own). */
export interface MemoryProbe {
  rss(): number
  collect(): void
}
const PROCESS: MemoryProbe = { rss: () => process.memoryUsage.rss(), collect: () => Bun.gc(true) }

/** The longest wait between checks after collections that did not bring RSS under the limit. */
const MAX_BACKOFF_MS = 30_000

/**
 * Checks RSS every `everyMs` and collects fully when it is above `softLimitBytes`, telling `onCollect` how long the
 * collection took; returns a stop function. When a
 * collection leaves RSS above the limit (the process really holds that much, as during a burst of events), the next
 * check waits twice as long, up to 30 s: a full collection is a pause, and repeating a useless one would only cost.
 */
export function startMemoryGuard(softLimitBytes: number, onCollect: (seconds: number) => void, everyMs = 500, probe: MemoryProbe = PROCESS): () => void {
  let wait = everyMs
  let timer: ReturnType<typeof setTimeout>
  const check = () => {
    if (probe.rss() > softLimitBytes) {
      // A full collection stops everything else in the process: its length is the pause a request can meet (metrics).
      const t0 = performance.now()
      probe.collect()
      onCollect((performance.now() - t0) / 1000)
      wait = probe.rss() > softLimitBytes ? Math.min(wait * 2, MAX_BACKOFF_MS) : everyMs
    } else wait = everyMs
    timer = setTimeout(check, wait)
    // Never what keeps the process alive.
    timer.unref()
  }
  timer = setTimeout(check, wait)
  timer.unref()
  return () => clearTimeout(timer)
}
