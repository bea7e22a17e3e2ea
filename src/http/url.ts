/** Cheap reads of a request URL as Bun hands it over (absolute: scheme, authority, path, query), without `new URL`. */

/** Index of the path's first '/' (after "scheme://authority"); the string's length when there is no path. */
function pathStart(url: string): number {
  const i = url.indexOf('/', url.indexOf('//') + 2)
  return i < 0 ? url.length : i
}

/** The authority ("host:port") of an absolute URL. */
export function authorityOf(url: string): string {
  return url.slice(url.indexOf('//') + 2, pathStart(url))
}

/** The path of an absolute URL, as the router sees it: up to '?' or '#', not decoded. */
export function pathOf(url: string): string {
  const start = pathStart(url)
  let end = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  if (end < 0 || (hash >= 0 && hash < end)) end = hash
  return end < 0 ? url.slice(start) || '/' : url.slice(start, end) || '/'
}
