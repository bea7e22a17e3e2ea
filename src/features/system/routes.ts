/** Liveness, readiness, version and the API document (contract §2). */
import { Type as T } from '@sinclair/typebox'
import { route, type AnyRoute } from '../../http/route'
import { AppError } from '../../http/errors'
import { API_VERSION, openApiDocument } from '../../http/openapi'
import { VERSION } from '../../version'
import { ping } from '../../db/client'
import { checkWritable, NOT_WRITABLE } from '../../db/writable'
import { SCHEMA_AHEAD } from '../../db/schema-version'

/** System routes; the OpenAPI route describes `all` (every route of the app). */
export const systemRoutes = (all: () => AnyRoute[]) => {
  let doc: unknown = null
  return [
    route({ method: 'GET', path: '/healthz', tag: 'system', summary: 'Process is alive', access: 'public', response: T.Object({ status: T.Literal('ok') }), handler: () => ({ status: 'ok' }) }),
    route({
      method: 'GET', path: '/readyz', errors: [503], tag: 'system', summary: 'Database answers and takes writes, and its schema is not newer than this instance', access: 'public', response: T.Object({ status: T.Literal('ok') }),
      async handler({ deps }) {
        if (!(await ping(deps.db))) throw new AppError(503, 'Database unavailable')
        if (deps.schemaAhead) throw new AppError(503, SCHEMA_AHEAD)
        if (await checkWritable(deps.db, deps.clock.now())) throw new AppError(503, NOT_WRITABLE)
        return { status: 'ok' }
      },
    }),
    route({
      method: 'GET', path: '/api/version', tag: 'system', summary: 'Service and API version', access: 'public',
      response: T.Object({ version: T.String(), api: T.String() }), handler: () => ({ version: VERSION, api: API_VERSION }),
    }),
    route({ method: 'GET', path: '/api/openapi.json', tag: 'system', summary: 'This document', access: 'public', handler: () => (doc ??= openApiDocument(all())) }),
  ]
}
