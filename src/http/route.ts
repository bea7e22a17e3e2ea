/**
 * Route definitions: one object per route holding its schemas, permission and handler. The same object
 * registers the Elysia route, validates the request and writes the OpenAPI document.
 */
import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox'
import type { AppDeps } from '../deps'
import { AppError, ValidationFailed, httpError, refusalEntries, type ErrorEntry } from './errors'
import { Forbidden, Invalid, Unauthenticated } from '../lib/errors'
import { checkPart, type Part } from './validation'
import { requestCookie, SESSION_COOKIE, setCookieLine } from './cookies'
import type { DEFAULTED } from './schemas'
import { authenticate, type Principal } from '../features/auth/service'
import { holds } from '../features/roles/service'
import { mayApply } from '../features/roles/scope'
import { audit } from '../features/audit/service'
import { Type as T } from '@sinclair/typebox'
import { CSV_PAGE, csvStream, wantsCsv } from './csv'

/** A permission a route needs: a verb and a resource, matched against the user's glob grants. */
export interface Need {
  verb: string
  resource: string
}

/**
 * A permission the handler judges on the concrete resource (scoped grants, contract §14: the minions of a job, the id
 * of a key, who started a job). The door lets in a caller holding some grant of one of `any` on that kind of resource
 * (`salt:`, `key:`, `job:`), so a caller with none is still a 403 before validation; `doc` says the rule in words.
 */
export interface ScopedNeed {
  scoped: { verb: string; kind: string }[]
  doc: string
}

/** Who may call a route: anyone, anyone with the caller resolved if logged in, any logged-in user, or holders of a permission. */
export type Access = 'public' | 'optional' | 'login' | Need | ScopedNeed

/** The caller a handler gets for a route's access: none on public routes, maybe one on optional ones, else one. */
export type CallerOf<A extends Access> = A extends 'public' ? null : A extends 'optional' ? Principal : NonNullable<Principal>

/** A request part as the handler sees it: properties with a schema default (schemas.ts `Default`) are always there. */
export type Input<S extends TSchema> = S extends TObject<infer P extends TProperties>
  ? Static<S> & { [K in keyof P as P[K] extends { readonly [DEFAULTED]: true } ? K : never]-?: Exclude<Static<P[K]>, undefined> }
  : Static<S>

/** Everything a handler receives. */
export interface Ctx<A extends Access, P, Q, B> {
  params: P
  query: Q
  body: B
  /** The body as sent, before defaults: the `input` of a 422 a handler raises about the whole body, as pydantic gives it. */
  rawBody: unknown
  principal: CallerOf<A>
  deps: AppDeps
  request: Request
  client: string
  /** Response status and extra headers the handler may set. */
  set: { status: number; headers: Record<string, string> }
  /** Sets or clears the session cookie. */
  cookie: CookieJar
  /** Another cookie than the session's (the OpenID Connect sign-in's short-lived one), with the same attributes. */
  otherCookie(name: string): CookieJar & { value: string | undefined }
}

/** Sets or clears one HttpOnly, SameSite=Lax cookie on path /, Secure under TLS. */
export interface CookieJar {
  set(value: string, maxAgeSeconds: number): void
  clear(): void
}

/**
 * What a route writes to the audit log once its handler has answered: the action, its target and detail from the
 * request and the result, by the calling user (or `actor`). With `failures`, a handler's error is recorded too (ok
 * false, the error's sentence as detail) before it is answered.
 */
export interface AuditSpec<C, R> {
  action: string
  target: (c: C, result: R) => string | null | Promise<string | null>
  detail?: (c: C, result: R) => string | null | Promise<string | null>
  /** Who acted, when that is not the logged-in user (login). */
  actor?: (c: C, result: R | undefined) => string | null
  /** Also records failures; `target` and `actor` then see no result. */
  failures?: boolean
  /** True when there is nothing to record (a logout without a session). */
  skip?: (c: C) => boolean
}

/** One route of the API. */
export interface RouteDef<A extends Access = Access, P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema, R = unknown> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  summary: string
  tag: string
  access: A
  /** Routes a user with must_change_pw may still call. */
  allowWhilePasswordChange?: boolean
  params?: P
  query?: Q
  body?: B
  /** Success status; 200 unless set. */
  status?: number
  response?: TSchema
  /** The success body's media type when it is not JSON (the Prometheus text of /metrics). */
  produces?: string
  /** Error statuses the handler itself may answer (domain errors: 404, 409, 429, 502, 503), for the API document. */
  errors?: number[]
  /** A route whose body the handler streams itself (an upload): the media types it takes. */
  upload?: string[]
  handler: (ctx: Ctx<A, Input<P>, Input<Q>, Input<B>>) => R | Promise<R>
  /** A list also answered as CSV (contract §16 "Export"): `?format=csv` or `Accept: text/csv`. */
  csv?: CsvExport<Ctx<A, Input<P>, Input<Q>, Input<B>>>
  audit?: AuditSpec<Ctx<A, Input<P>, Input<Q>, Input<B>>, Awaited<R>>
}

/**
 * A list's CSV export: the file name offered, the header, and one page of rows as cells, read with the request's
 * filters from `offset` (its `limit` and `offset` query parameters are not used: the export is every matching row).
 */
export interface CsvExport<C> {
  filename: string
  header: string[]
  page: (c: C, offset: number, limit: number) => unknown[][] | Promise<unknown[][]>
}

/** The `format` query parameter of a route with a CSV export. */
const Format = T.Optional(T.Union([T.Literal('json'), T.Literal('csv')], { description: 'csv: every matching row as CSV (also with Accept: text/csv); limit and offset are then not used' }))

/** Any route, for the app and the API document. */
export type AnyRoute = RouteDef<Access, TSchema, TSchema, TSchema, any>

/** Declares a route with its types inferred from its access and schemas. */
export function route<const A extends Access, P extends TSchema, Q extends TSchema, B extends TSchema, R>(def: RouteDef<A, P, Q, B, R>): AnyRoute {
  // A CSV export takes `format` beside the list's own query parameters (validated and documented with them).
  if (def.csv) return { ...def, query: T.Object({ ...((def.query as TObject | undefined)?.properties ?? {}), format: Format }) } as unknown as AnyRoute
  return def as unknown as AnyRoute
}

/** The parsed request body as the parse hook left it: absent, or a JSON value. */
export interface ParsedBody {
  present: boolean
  value: unknown
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** True for `application/json` with optional parameters. */
export const isJsonType = (ct: string | null) => !!ct && /^application\/json\s*(;|$)/i.test(ct.trim())

/** Reads the session token from the Bearer header or the cookie, noting which one carried it. */
function readToken(request: Request, cookieValue: string | undefined): { token: string; via: 'bearer' | 'cookie' } | null {
  const auth = request.headers.get('authorization')
  if (auth && /^bearer /i.test(auth)) return { token: auth.slice(7).trim(), via: 'bearer' }
  if (cookieValue) return { token: cookieValue, via: 'cookie' }
  return null
}

/** The origin of SALTDECK_PUBLIC_URL (the address people reach Saltdeck at, maybe behind a proxy path); null when unset. */
const publicOrigin = (url: string | null) => (url ? new URL(url).origin : null)

/** Methods whose request may carry no body at all and then needs no Content-Type (contract §1). */
const BODILESS = new Set(['POST', 'DELETE'])

/** Runs authentication, CSRF, password-change and permission checks, in the contract's order. */
async function authorize(def: AnyRoute, deps: AppDeps, request: Request, url: () => URL, cookieValue: string | undefined, hasBody: boolean): Promise<Principal> {
  if (def.access === 'public') return null
  const tok = readToken(request, cookieValue)
  const principal = tok ? await authenticate(deps, tok.token, tok.via) : null
  // A cookie write is checked against cross-site requests also where a caller is optional (logout is a state change too).
  if (principal?.via === 'cookie' && UNSAFE.has(def.method)) {
    // A browser form cannot send JSON cross-site without a preflight; a request with no body at all has nothing to smuggle.
    const bodiless = !hasBody && BODILESS.has(def.method) && request.headers.get('content-type') === null
    // An upload's media types were checked with its body (security.ts): application/zip is no more sendable cross-site
    // by a form than JSON is.
    if (!def.upload && !bodiless && !isJsonType(request.headers.get('content-type'))) throw new AppError(415, 'Content-Type must be application/json')
    const origin = request.headers.get('origin')
    if (origin !== null && origin !== url().origin && origin !== publicOrigin(deps.config.publicUrl)) throw new Forbidden()
  }
  if (def.access === 'optional') return principal
  if (!principal) throw new Unauthenticated()
  if (principal.mustChangePw && !def.allowWhilePasswordChange) throw new AppError(403, 'Password change required')
  if (def.access === 'login') return principal
  if ('scoped' in def.access) {
    const any = def.access.scoped
    if (!principal.grants.some((g) => any.some((n) => mayApply(g, n.verb, n.kind)))) throw new Forbidden()
  } else if (!holds(principal.grants, def.access.verb, def.access.resource)) throw new Forbidden()
  return principal
}

/** Validates path, query and body together so every problem is reported at once. */
function validate(def: AnyRoute, params: unknown, query: unknown, body: ParsedBody | undefined) {
  const errors: ErrorEntry[] = []
  const out: { params: unknown; query: unknown; body: unknown } = { params, query, body: body?.value }
  if (def.params) {
    const r = checkPart('path', def.params, params)
    out.params = r.value
    errors.push(...r.errors)
  }
  if (def.query) {
    const r = checkPart('query', def.query, query)
    out.query = r.value
    errors.push(...r.errors)
  }
  if (def.body) {
    const r = checkPart('body', def.body, body?.present ? body.value : undefined)
    out.body = r.value
    errors.push(...r.errors)
  }
  if (errors.length) throw new ValidationFailed(errors)
  return out
}

/** The Elysia context fields a route handler needs. */
export interface ElysiaBits {
  request: Request
  params: Record<string, string>
  body: unknown
  set: { status?: number | string; headers: Record<string, string | number | string[]> }
  server: { requestIP(r: Request): { address: string } | null } | null
}

/** Turns a route definition into an Elysia handler. */
export function toHandler(def: AnyRoute, deps: AppDeps) {
  // The handler never names Elysia's `cookie` (Elysia then parses no cookie): cookies.ts reads and writes them.
  return async (c: ElysiaBits) => {
    // Parsed only when needed: most requests have no query string and set no cookie.
    let parsedUrl: URL | undefined
    const url = () => (parsedUrl ??= new URL(c.request.url))
    const parsed = c.body as ParsedBody | undefined
    const principal = await authorize(def, deps, c.request, url, requestCookie(c.request, SESSION_COOKIE), !!parsed?.present)
    const query = c.request.url.includes('?') ? Object.fromEntries(url().searchParams) : {}
    const params = Object.fromEntries(Object.entries(c.params ?? {}).map(([k, v]) => [k, safeDecode(v)]))
    const v = validate(def, params, query, parsed)
    const set = { status: def.status ?? 200, headers: {} as Record<string, string> }
    // Set-Cookie lines by cookie name (a cookie set twice is sent once, as last set); made by the few routes that set one.
    let setCookies: Map<string, string> | undefined
    const secure = () => deps.config.cookieSecure || url().protocol === 'https:'
    const setCookie = (name: string, value: string, maxAge: number) => (setCookies ??= new Map()).set(name, setCookieLine(name, value, maxAge, secure()))
    const jar = (name: string): CookieJar => ({ set: (value, maxAge) => void setCookie(name, value, maxAge), clear: () => void setCookie(name, '', 0) })
    let client: string | undefined
    const ctx = {
      params: v.params,
      query: v.query,
      body: v.body,
      rawBody: parsed?.value,
      principal,
      deps,
      request: c.request,
      // Asked of the server only when a handler or the audit entry reads it (it was ~5% of a small request's time).
      get client() {
        return (client ??= c.server?.requestIP(c.request)?.address ?? 'local')
      },
      set,
      cookie: jar(SESSION_COOKIE),
      otherCookie: (name: string) => ({ ...jar(name), value: requestCookie(c.request, name) }),
    } as Ctx<Access, unknown, unknown, unknown>
    let result: unknown
    try {
      if (def.csv && wantsCsv((v.query as { format?: string }).format, c.request.headers.get('accept'))) return await csvResponse(def.csv, ctx)
      result = await (def.audit ? audited(def, ctx) : def.handler(ctx))
    } catch (e) {
      throw e instanceof Invalid ? refusalEntries(e, (field) => partOf(def, field)) : e
    }
    c.set.status = set.status
    Object.assign(c.set.headers, set.headers)
    // A list under set-cookie: Elysia sends each as its own Set-Cookie header.
    if (setCookies) c.set.headers['set-cookie'] = [...setCookies.values()]
    if (set.status === 204) return new Response(null, { status: 204, headers: responseHeaders(c.set.headers) })
    return result
  }
}

/** The request part a refused field came from: the path or query when the route's schema there names it, else the body. */
function partOf(def: AnyRoute, field: string | number): Part {
  const names = (s: TSchema | undefined) => (s as TObject | undefined)?.properties ?? {}
  if (typeof field === 'string' && field in names(def.params)) return 'path'
  if (typeof field === 'string' && field in names(def.query)) return 'query'
  return 'body'
}

/** A CSV answer streamed page by page; the first page is read before answering, so its errors are still JSON errors. */
async function csvResponse(spec: CsvExport<AnyCtx>, ctx: AnyCtx) {
  const first = await spec.page(ctx, 0, CSV_PAGE)
  const body = csvStream({ header: spec.header, cells: (r: unknown[]) => r }, first, (offset, limit) => spec.page(ctx, offset, limit))
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${spec.filename}"`,
      'cache-control': 'no-store', 'x-content-type-options': 'nosniff',
    },
  })
}

/** Elysia's response headers as a Headers object: each Set-Cookie line its own header. */
function responseHeaders(set: ElysiaBits['set']['headers']): Headers {
  const out = new Headers()
  for (const [k, v] of Object.entries(set)) {
    if (Array.isArray(v)) for (const line of v) out.append(k, line)
    else out.set(k, String(v))
  }
  return out
}

type AnyCtx = Ctx<Access, unknown, unknown, unknown>

/** Runs the handler and writes its audit entry: after success, and after a failure when the spec asks for it. */
async function audited(def: AnyRoute, c: AnyCtx): Promise<unknown> {
  const spec = def.audit as AuditSpec<AnyCtx, unknown>
  if (spec.skip?.(c)) return def.handler(c)
  const who = (result: unknown) => (spec.actor ? spec.actor(c, result) : c.principal?.username ?? null)
  let result: unknown
  try {
    result = await def.handler(c)
  } catch (e) {
    const known = httpError(e)
    if (spec.failures && known) await audit(c.deps, { username: who(undefined), action: spec.action, target: await spec.target(c, undefined), ok: false, detail: known.detail, client: c.client })
    throw e
  }
  await audit(c.deps, { username: who(result), action: spec.action, target: await spec.target(c, result), detail: (await spec.detail?.(c, result)) ?? null, client: c.client })
  return result
}

function safeDecode(s: string) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
