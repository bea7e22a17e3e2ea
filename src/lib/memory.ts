/**
 * A soft memory limit for the serving process. JavaScriptCore sizes its heap for the machine's RAM and collects late,
 * so the garbage of thousands of JSON answers a second lifts RSS well above what the process holds; when RSS passes
 * the limit, a full collection gives it back. Measured at 50,000 minions (bench/RESULTS.md, issue 14): peak RSS of the
 * read benchmark 162 -> 149 MB, throughput unchanged within noise.
 */

/** Checks RSS every `everyMs` and collects fully when it is above `softLimitBytes`; returns a stop function. */
export function startMemoryGuard(softLimitBytes: number, onCollect: () => void, everyMs = 500): () => void {
  const timer = setInterval(() => {
    if (process.memoryUsage.rss() <= softLimitBytes) return
    Bun.gc(true)
    onCollect()
  }, everyMs)
  // Never what keeps the process alive.
  timer.unref()
  return () => clearInterval(timer)
}
