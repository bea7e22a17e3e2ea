/** Serves the embedded dashboard: gzip when the browser takes it, ETag revalidation, strict security headers. */
import { ASSETS, type Asset } from './assets'

/** Headers on every dashboard file: no inline script or style may run, nothing loads from elsewhere. */
const SECURITY = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

interface Loaded {
  raw: Uint8Array
  gzip: Uint8Array
  etag: string
}
const cache = new Map<string, Promise<Loaded>>()

/** Reads (or bundles) and compresses an asset once per process; a failure is not cached, the next request retries. */
function load(a: Asset): Promise<Loaded> {
  let p = cache.get(a.url)
  if (!p) {
    p = a.bytes().then((raw) => ({ raw, gzip: Bun.gzipSync(raw, { level: 9 }), etag: `"${Bun.hash(raw).toString(36)}"` }))
    p.catch(() => cache.delete(a.url))
    cache.set(a.url, p)
  }
  return p
}

/** The response for one asset request. */
export async function assetResponse(a: Asset, request: Request): Promise<Response> {
  const f = await load(a)
  const headers: Record<string, string> = { ...SECURITY, 'content-type': a.type, 'cache-control': 'no-cache', etag: f.etag, vary: 'accept-encoding' }
  if (request.headers.get('if-none-match') === f.etag) return new Response(null, { status: 304, headers })
  const gz = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')
  if (gz) headers['content-encoding'] = 'gzip'
  return new Response(gz ? f.gzip : f.raw, { headers })
}

/** The dashboard's routes as [path, handler] pairs for the app to mount. */
export const dashboardRoutes = ASSETS.map((a) => [a.url, ({ request }: { request: Request }) => assetResponse(a, request)] as const)
