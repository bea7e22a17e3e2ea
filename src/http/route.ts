/**
 * Route definitions: one object per route holding its schemas, permission and handler. The same object
 * registers the Elysia route, validates the request and writes the OpenAPI document.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import type { AppDeps } from '../deps'
import { AppError, ValidationFailed, type ErrorEntry } from './errors'
import { Forbidden, Unauthenticated } from '../lib/errors'
import { checkPart } from './validation'
import { authenticate, type Principal } from '../features/auth/service'
import { holds } from '../features/roles/service'

/** A permission a route needs: a verb and a resource, matched against the user's glob grants. */
export interface Need {
  verb: string
  resource: string
}

/** Who may call a route: anyone, anyone with the caller resolved if logged in, any logged-in user, or holders of a permission. */
export type Access = 'public' | 'optional' | 'login' | Need

/** Everything a handler receives. */
export interface Ctx<P, Q, B> {
  params: P
  query: Q
  body: B
  principal: Principal
  deps: AppDeps
  request: Request
  client: string
  /** Response status and extra headers the handler may set. */
  set: { status: number; headers: Record<string, string> }
  /** Sets or clears the session cookie. */
  cookie: { set(value: string, maxAgeSeconds: number): void; clear(): void }
}

/** One route of the API. */
export interface RouteDef<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  summary: string
  tag: string
  access: Access
  /** Routes a user with must_change_pw may still call. */
  allowWhilePasswordChange?: boolean
  params?: P
  query?: Q
  body?: B
  /** Success status; 200 unless set. */
  status?: number
  response?: TSchema
  handler: (ctx: Ctx<Static<P>, Static<Q>, Static<B>>) => unknown | Promise<unknown>
}

/** Declares a route with its types inferred from the schemas. */
export function route<P extends TSchema, Q extends TSchema, B extends TSchema>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef
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

/** Runs authentication, CSRF, password-change and permission checks, in the contract's order. */
function authorize(def: RouteDef, deps: AppDeps, request: Request, url: URL, cookieValue: string | undefined): Principal {
  if (def.access === 'public') return null
  const tok = readToken(request, cookieValue)
  const principal = tok ? authenticate(deps, tok.token, tok.via) : null
  if (def.access === 'optional') return principal
  if (!principal) throw new Unauthenticated()
  if (principal.via === 'cookie' && UNSAFE.has(def.method)) {
    if (!isJsonType(request.headers.get('content-type'))) throw new AppError(415, 'Content-Type must be application/json')
    const origin = request.headers.get('origin')
    if (origin !== null && origin !== url.origin) throw new Forbidden()
  }
  if (principal.mustChangePw && !def.allowWhilePasswordChange) throw new AppError(403, 'Password change required')
  if (def.access !== 'login' && !holds(principal.grants, def.access.verb, def.access.resource)) throw new Forbidden()
  return principal
}

/** Validates path, query and body together so every problem is reported at once. */
function validate(def: RouteDef, params: unknown, query: unknown, body: ParsedBody | undefined) {
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
  set: { status?: number | string; headers: Record<string, string | number> }
  cookie: Record<string, { value?: unknown; set(o: object): unknown; remove(): unknown }>
  server: { requestIP(r: Request): { address: string } | null } | null
}

/** Turns a route definition into an Elysia handler. */
export function toHandler(def: RouteDef, deps: AppDeps) {
  return async (c: ElysiaBits) => {
    const jar = c.cookie.saltdeck_session!
    const url = new URL(c.request.url)
    const principal = authorize(def, deps, c.request, url, typeof jar.value === 'string' ? jar.value : undefined)
    const query = Object.fromEntries(url.searchParams)
    const params = Object.fromEntries(Object.entries(c.params ?? {}).map(([k, v]) => [k, safeDecode(v)]))
    const v = validate(def, params, query, c.body as ParsedBody | undefined)
    const set = { status: def.status ?? 200, headers: {} as Record<string, string> }
    const secure = deps.config.cookieSecure || url.protocol === 'https:'
    const result = await def.handler({
      params: v.params,
      query: v.query,
      body: v.body,
      principal,
      deps,
      request: c.request,
      client: c.server?.requestIP(c.request)?.address ?? 'local',
      set,
      cookie: {
        set: (value, maxAge) => jar.set({ value, httpOnly: true, sameSite: 'lax', path: '/', maxAge, secure }),
        clear: () => jar.set({ value: '', httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, secure }),
      },
    } as Ctx<unknown, unknown, unknown>)
    c.set.status = set.status
    Object.assign(c.set.headers, set.headers)
    if (set.status === 204) return new Response(null, { status: 204, headers: c.set.headers as Record<string, string> })
    return result
  }
}

function safeDecode(s: string) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
