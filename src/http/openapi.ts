/** The OpenAPI 3.1 document, written from the same route definitions and TypeBox schemas that validate requests. */
import { Kind, type TSchema } from '@sinclair/typebox'
import type { AnyRoute } from './route'

/** The API version of interface.md. */
export const API_VERSION = '0.1.0'


const ValidationError = {
  type: 'object', required: ['detail'],
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object', required: ['loc', 'msg', 'type'],
        properties: {
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }, msg: { type: 'string' }, type: { type: 'string' },
          input: {}, ctx: { type: 'object' },
        },
      },
    },
  },
}
const ErrorBody = { type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } }

/** Why a route may answer each error status, for the document's descriptions. */
const WHY: Record<number, string> = {
  401: 'Not authenticated', 403: 'Forbidden (permission, password change required, or a cross-site cookie write)',
  404: 'Not found', 409: 'Conflict', 413: 'Request body too large', 415: 'Content-Type must be application/json',
  421: 'Host not allowed (a loopback bind answers loopback names and SALTDECK_PUBLIC_URL only)', 429: 'Too many failed logins',
  502: 'Salt API error', 503: 'Salt API not configured or unavailable, or the database not writable (or unavailable, for readyz)',
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Every error status a route can answer, from its definition: its access (401, 403), its method and body (413, 415 and
 * 422 for a body that cannot be parsed, 503 for a write the database refuses), its schemas (422), the host guard (421) and what its handler declares.
 */
export function errorStatuses(r: AnyRoute): number[] {
  const out = new Set<number>([421, ...(r.errors ?? [])])
  const authed = r.access !== 'public'
  if (authed && r.access !== 'optional') out.add(401).add(403)
  // Cookie writes are checked for their Content-Type and Origin also where a caller is optional (logout).
  if (authed && UNSAFE.has(r.method)) out.add(403).add(415)
  if (UNSAFE.has(r.method) || r.body) out.add(413).add(422)
  // Any write can meet a database that refuses it (disk full, read-only): 503 `Database not writable`.
  if (UNSAFE.has(r.method)) out.add(503)
  if (r.params || r.query || r.body) out.add(422)
  return [...out].sort((a, b) => a - b)
}

/** A schema as the document shows it: the validator's custom formats become standard ones. */
const documented = (s: TSchema) => JSON.parse(JSON.stringify(s).replaceAll('"format":"http-url"', '"format":"uri"'))

function parameters(where: 'path' | 'query', schema: TSchema | undefined) {
  if (!schema || schema[Kind] !== 'Object') return []
  const required = new Set<string>(schema.required ?? [])
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: documented(s) }))
}

/** Builds the document for a list of routes. */
export function openApiDocument(routes: AnyRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}')
    const ok = String(r.status ?? 200)
    const responses: Record<string, unknown> = {
      [ok]: ok === '204' ? { description: 'No content' } : ok === '302' ? { description: 'Redirect', headers: { Location: { schema: { type: 'string' } } } } : { description: 'Success', content: { [r.produces ?? 'application/json']: { schema: r.response ? documented(r.response) : r.produces ? { type: 'string' } : {} } } },
    }
    // A list with a CSV export also answers text/csv (`?format=csv` or Accept: text/csv): a header row, then every matching row.
    if (r.csv) (responses[ok] as { content: Record<string, unknown> }).content['text/csv'] = { schema: { type: 'string', description: `CSV with the header ${r.csv.header.join(',')}` } }
    for (const status of errorStatuses(r))
      responses[String(status)] = status === 422
        ? { description: 'Validation error', content: { 'application/json': { schema: ValidationError } } }
        : { description: WHY[status] ?? 'Error', content: { 'application/json': { schema: ErrorBody } } }
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      summary: r.summary,
      tags: [r.tag],
      parameters: [...parameters('path', r.params), ...parameters('query', r.query)],
      responses,
    }
    if (typeof r.access === 'object') op['x-permission'] = r.access
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: documented(r.body) } } }
    if (r.upload) op.requestBody = { required: true, content: Object.fromEntries(r.upload.map((t) => [t, { schema: t === 'application/json' ? { type: 'array', items: { type: 'object' } } : { type: 'string', format: 'binary' } }])) }
    ;(paths[path] ??= {})[r.method.toLowerCase()] = op
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Saltdeck API', version: API_VERSION, description: 'Administration and monitoring of a Salt fleet through salt-api.' },
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'saltdeck_session' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
    },
    paths,
  }
}
