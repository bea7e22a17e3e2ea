/** A hash router: the page is `#/path?query`, so the server only ever serves `/`. */
import { useEffect, useState } from 'preact/hooks'

/** The current location: path segments after `#` and the query parameters. */
export interface Location {
  path: string
  query: URLSearchParams
}

/** Reads the current hash as a Location. */
export function current(): Location {
  const raw = location.hash.replace(/^#/, '') || '/'
  const q = raw.indexOf('?')
  return { path: q < 0 ? raw : raw.slice(0, q), query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) }
}

/** The href for a path and query, leaving out empty values. */
export function href(path: string, query: Record<string, string | number | undefined | null> = {}): string {
  const u = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v))
  const s = u.toString()
  return `#${path}${s ? `?${s}` : ''}`
}

/** Goes to a path (adds a history entry unless `replace`). */
export function navigate(path: string, query: Record<string, string | number | undefined | null> = {}, replace = false) {
  const h = href(path, query)
  if (replace) history.replaceState(null, '', h)
  else history.pushState(null, '', h)
  window.dispatchEvent(new HashChangeEvent('hashchange'))
}

/** Hook: re-renders on every hash change and returns the current Location. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current)
  useEffect(() => {
    const on = () => setLoc(current())
    window.addEventListener('hashchange', on)
    window.addEventListener('popstate', on)
    return () => {
      window.removeEventListener('hashchange', on)
      window.removeEventListener('popstate', on)
    }
  }, [])
  return loc
}

/** Matches `/minions/:id` against a path; returns the decoded params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/')
  const s = path.split('/')
  if (p.length !== s.length) return null
  const out: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) {
      try {
        out[p[i]!.slice(1)] = decodeURIComponent(s[i]!)
      } catch {
        return null
      }
    } else if (p[i] !== s[i]) return null
  }
  return out
}
