/** The OpenAPI 3.1 document, written from the same route definitions and TypeBox schemas that validate requests. */
import { Kind, type TSchema } from '@sinclair/typebox'
import type { AnyRoute } from './route'

/** The API version of interface.md. */
export const API_VERSION = '0.1.0'

const plain = (s: TSchema) => JSON.parse(JSON.stringify(s))

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

function parameters(where: 'path' | 'query', schema: TSchema | undefined) {
  if (!schema || schema[Kind] !== 'Object') return []
  const required = new Set<string>(schema.required ?? [])
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: plain(s) }))
}

/** Builds the document for a list of routes. */
export function openApiDocument(routes: AnyRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}')
    const ok = String(r.status ?? 200)
    const responses: Record<string, unknown> = {
      [ok]: ok === '204' ? { description: 'No content' } : { description: 'Success', content: { 'application/json': { schema: r.response ? plain(r.response) : {} } } },
      '422': { description: 'Validation error', content: { 'application/json': { schema: ValidationError } } },
    }
    if (r.access !== 'public' && r.access !== 'optional') {
      responses['401'] = { description: 'Not authenticated', content: { 'application/json': { schema: ErrorBody } } }
      responses['403'] = { description: 'Forbidden', content: { 'application/json': { schema: ErrorBody } } }
    }
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      summary: r.summary,
      tags: [r.tag],
      parameters: [...parameters('path', r.params), ...parameters('query', r.query)],
      responses,
    }
    if (typeof r.access === 'object') op['x-permission'] = r.access
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(r.body) } } }
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
