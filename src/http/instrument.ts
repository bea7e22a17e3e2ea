/** The request wrapper of a live server: times each request, counts it under its route pattern, logs one line. */
import type { AppDeps } from '../deps'

/** A route's method and Elysia path pattern (`/api/minions/:minion_id`). */
export interface Pattern {
  method: string
  path: string
}

/** Compiles patterns once; the matcher answers the patterns that match a concrete path. */
export function routeMatcher(patterns: Pattern[]) {
  const compiled = patterns.map((p) => ({ ...p, re: new RegExp(`^${p.path.replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`) }))
  return (path: string) => compiled.filter((c) => c.re.test(path))
}

/** Wraps `fetch` with metrics and the request log line. */
export function instrument(deps: AppDeps, patterns: Pattern[], fetch: (req: Request) => Response | Promise<Response>) {
  const match = routeMatcher(patterns)
  return async (req: Request): Promise<Response> => {
    const t0 = performance.now()
    const res = await fetch(req)
    const ms = performance.now() - t0
    const path = new URL(req.url).pathname
    // The pattern, not the path: minion ids in paths would make the label set unbounded (and carry hostile text).
    const route = match(path).find((m) => m.method === req.method || (req.method === 'HEAD' && m.method === 'GET'))?.path ?? 'unmatched'
    deps.metrics?.request(route, req.method, res.status, ms / 1000)
    deps.log.info('request', { method: req.method, path, status: res.status, ms: Math.round(ms * 10) / 10 })
    return res
  }
}
