/** createApp: composes every feature's routes into one Elysia app. Never listens, never starts timers. */
import { Elysia } from 'elysia'
import type { AppDeps } from './deps'
import { ValidationFailed, httpError } from './http/errors'
import { toHandler, type AnyRoute, type ElysiaBits } from './http/route'
import { readBody } from './http/security'
import { authRoutes } from './features/auth/routes'
import { userRoutes } from './features/users/routes'
import { roleRoutes } from './features/roles/routes'
import { settingsRoutes } from './features/settings/routes'
import { saltSourceRoutes } from './features/salt-sources/routes'
import { identityRoutes } from './features/identity/routes'
import { oidcRoutes } from './features/identity/oidc-routes'
import { activityRoutes } from './features/activity/routes'
import { minionRoutes } from './features/minions/routes'
import { inventoryRoutes } from './features/inventory/routes'
import { auditRoutes } from './features/audit/routes'
import { jobRoutes } from './features/jobs/routes'
import { saltRoutes } from './features/salt-actions/routes'
import { batchRoutes } from './features/batches/routes'
import { systemRoutes } from './features/system/routes'
import { dashboardRoutes } from './features/dashboard/serve'
import { metricsRoutes } from './features/metrics/routes'
import { saltHealthRoutes } from './features/salt-health/routes'
import { instanceRoutes } from './features/instances/routes'
import { runRoutes } from './features/runs/routes'
import { alertRoutes } from './features/alerts/routes'
import { vulnRoutes } from './features/vulns/routes'
import { preferenceRoutes } from './features/preferences/routes'
import { templateRoutes } from './features/templates/routes'
import { scheduleRoutes } from './features/templates/schedule-routes'
import { Metrics } from './features/metrics/registry'
import { routeMatcher, type Pattern } from './http/instrument'
import { authorityOf } from './http/url'
import { POLLER_NAMES } from './pollers/definitions'
import { noteWriteFailure } from './db/writable'
import { SCHEMA_AHEAD } from './db/schema-version'

/** Headers on every answer: no content sniffing, whatever the route. */
const ALWAYS = { 'x-content-type-options': 'nosniff' }

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...ALWAYS, ...headers } })

/** Every route of the API, in document order. */
export function allRoutes(): AnyRoute[] {
  const routes: AnyRoute[] = [
    ...authRoutes, ...preferenceRoutes, ...userRoutes, ...roleRoutes, ...settingsRoutes, ...saltSourceRoutes, ...identityRoutes, ...oidcRoutes, ...activityRoutes, ...minionRoutes, ...inventoryRoutes, ...jobRoutes, ...saltRoutes(POLLER_NAMES), ...batchRoutes, ...saltHealthRoutes, ...instanceRoutes, ...runRoutes, ...templateRoutes, ...scheduleRoutes, ...alertRoutes, ...vulnRoutes, ...auditRoutes, ...metricsRoutes,
  ]
  return [...systemRoutes(() => routes), ...routes]
}

/** Methods allowed on a path, for telling 405 from 404. */
function methodsFor(routes: AnyRoute[]) {
  const match = routeMatcher(routes)
  return (path: string) => match(path).map((c) => c.method)
}

/** Every method and path pattern the app answers, for labelling requests in metrics. */
export function routePatterns(): Pattern[] {
  return [...allRoutes(), ...dashboardRoutes.map(([path]) => ({ method: 'GET', path }))]
}

/** Loopback host names: a page served under another name that resolves here is a DNS-rebinding attempt. */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|::1)$/i

/**
 * Whether a request's Host may reach this service. Bound to a loopback address, Saltdeck answers only to loopback
 * names and to SALTDECK_PUBLIC_URL's host, so a hostile page cannot rebind its own name to 127.0.0.1 and read the API.
 */
function hostGuard(config: AppDeps['config']): (req: Request) => boolean {
  if (!LOOPBACK.test(config.host)) return () => true
  const publicHost = config.publicUrl ? new URL(config.publicUrl).hostname.toLowerCase() : null
  // Answers per authority ("host:port"), so a request parses its URL only for a host not seen lately.
  const known = new Map<string, boolean>()
  return (req) => {
    const authority = authorityOf(req.url)
    let ok = known.get(authority)
    if (ok === undefined) {
      // Bun builds the request URL from the Host header; a request made in process (app.handle) has its URL's host.
      const host = new URL(req.url).hostname.toLowerCase()
      ok = LOOPBACK.test(host) || host === publicHost
      if (known.size >= 64) known.clear()
      known.set(authority, ok)
    }
    return ok
  }
}

/** Methods that change nothing, served even while the schema is ahead of this build. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Builds the app around its dependencies. */
export function createApp(deps: AppDeps, extraRoutes: AnyRoute[] = []) {
  deps.metrics ??= new Metrics()
  const routes = [...allRoutes(), ...extraRoutes]
  const allowed = methodsFor(routes)
  const uploads = new Map(routes.flatMap((r) => (r.upload ? [[r.path, r.upload] as const] : [])))
  const hostAllowed = hostGuard(deps.config)
  const app = new Elysia()
    .onRequest(({ request, set }) => {
      Object.assign(set.headers, ALWAYS)
      if (!hostAllowed(request)) return json(421, { detail: 'Host not allowed: on a loopback address Saltdeck answers to localhost names and SALTDECK_PUBLIC_URL only' })
      // Behind a newer schema (a rolling upgrade under way) reads are served, writes refused before they reach a store.
      if (deps.schemaAhead && !READ_METHODS.has(request.method)) return json(503, { detail: SCHEMA_AHEAD })
    })
    .onParse(({ request }) => readBody(request, uploads))
    .onError(({ error: raw, code, request }) => {
      // Elysia wraps what the parse hook throws in a ParseError; our own error is its cause.
      const error = code === 'PARSE' && (raw as Error).cause ? (raw as Error).cause : raw
      // A write the database refused is remembered for readiness and Salt health until a write succeeds again.
      noteWriteFailure(deps.db, error, deps.clock.now())
      const known = httpError(error)
      if (known) return json(known.status, { detail: known.detail }, known.headers)
      if (error instanceof ValidationFailed) return json(422, { detail: error.entries })
      if (code === 'NOT_FOUND') {
        const methods = allowed(new URL(request.url).pathname)
        if (methods.length) return json(405, { detail: 'Method Not Allowed' }, { allow: [...new Set(methods)].join(', ') })
        return json(404, { detail: 'Not Found' })
      }
      deps.log.error('request failed', { path: new URL(request.url).pathname, error: String((error as Error)?.stack ?? error) })
      return json(500, { detail: 'Internal Server Error' })
    })
  for (const [path, handler] of dashboardRoutes) app.get(path, handler)
  for (const r of routes) app.route(r.method, r.path, toHandler(r, deps) as unknown as (c: ElysiaBits) => unknown)
  return app
}

/** The app type, for tests and main. */
export type App = ReturnType<typeof createApp>
