/** The request wrapper of a live server: times each request, counts it under its route pattern, logs one line. */
import type { AppDeps } from '../deps'
import { pathOf } from './url'

/** A route's method and Elysia path pattern (`/api/minions/:minion_id`). */
export interface Pattern {
  method: string
  path: string
}

type Compiled = Pattern & { re: RegExp; order: number }

/** A path's bucket: its segment count and first two segments, which every pattern filed under it shares. */
const bucketOf = (segments: string[]) => `${segments.length}/${segments[1] ?? ''}/${segments[2] ?? ''}`

/**
 * Compiles patterns once; the matcher answers the patterns that match a concrete path, in the given order. Patterns
 * are filed by segment count and first two segments (those with a parameter or wildcard there are tried always), so
 * a request tests a few expressions instead of every route's.
 */
export function routeMatcher(patterns: Pattern[]) {
  const filed = new Map<string, Compiled[]>()
  const always: Compiled[] = []
  patterns.forEach((p, order) => {
    const c = { ...p, order, re: new RegExp(`^${p.path.replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`) }
    const segs = p.path.split('/')
    if (p.path.includes('*') || segs.slice(1, 3).some((s) => s.startsWith(':'))) return void always.push(c)
    // The expression allows a trailing slash: file the pattern under both segment counts.
    for (const key of new Set([bucketOf(segs), bucketOf([...segs, ''])])) filed.set(key, [...(filed.get(key) ?? []), c])
  })
  return (path: string): Pattern[] => {
    const hits = (filed.get(bucketOf(path.split('/'))) ?? []).filter((c) => c.re.test(path))
    for (const c of always) if (c.re.test(path)) hits.push(c)
    return always.length ? hits.sort((a, b) => a.order - b.order) : hits
  }
}

/** Wraps `fetch` with metrics and the request log line. */
export function instrument(deps: AppDeps, patterns: Pattern[], fetch: (req: Request) => Response | Promise<Response>) {
  const match = routeMatcher(patterns)
  return async (req: Request): Promise<Response> => {
    const t0 = performance.now()
    const res = await fetch(req)
    const ms = performance.now() - t0
    const path = pathOf(req.url)
    // The pattern, not the path: minion ids in paths would make the label set unbounded (and carry hostile text).
    const route = match(path).find((m) => m.method === req.method || (req.method === 'HEAD' && m.method === 'GET'))?.path ?? 'unmatched'
    deps.metrics?.request(route, req.method, res.status, ms / 1000)
    deps.log.info('request', { method: req.method, path, status: res.status, ms: Math.round(ms * 10) / 10 })
    return res
  }
}
