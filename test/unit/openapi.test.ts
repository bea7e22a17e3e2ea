// Proves the OpenAPI document: version, every route, and the schemas of its bodies and query parameters.
import { expect, test } from 'bun:test'
import { allRoutes } from '../../src/app'
import { openApiDocument } from '../../src/http/openapi'

test('the OpenAPI document is 3.1, version 0.1.0, and lists every route with its schemas', () => {
  const doc = openApiDocument(allRoutes())
  expect(doc.openapi).toBe('3.1.0')
  expect(doc.info.version).toBe('0.1.0')
  for (const r of allRoutes()) expect(doc.paths[r.path.replace(/:([a-z_]+)/g, '{$1}')]?.[r.method.toLowerCase()]).toBeDefined()
  const pollers = doc.paths['/api/admin/settings/pollers']!.put as any
  const prop = pollers.requestBody.content['application/json'].schema.properties.event_stream_retention_days
  expect(prop.anyOf[0]).toMatchObject({ type: 'integer', minimum: 1, maximum: 365 })
  expect(pollers.requestBody.content['application/json'].schema.additionalProperties).toBe(false)
  const activity = doc.paths['/api/activity']!.get as any
  expect(activity.parameters.find((p: any) => p.name === 'since_minutes').schema).toMatchObject({ minimum: 1, maximum: 10080 })
  expect(activity.responses['422']).toBeDefined()
})

test('each route lists every status it can answer (issue 9 item 10), and custom formats show as standard ones', () => {
  const doc = openApiDocument(allRoutes()) as any
  const codes = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).map(Number).sort((a, b) => a - b)
  expect(codes('/api/auth/login', 'post')).toEqual([200, 401, 403, 413, 421, 422, 429, 503])
  expect(codes('/api/users/{user_id}', 'delete')).toEqual([204, 401, 403, 404, 409, 413, 415, 421, 422, 503])
  expect(codes('/api/run', 'post')).toEqual([202, 401, 403, 404, 413, 415, 421, 422, 502, 503])
  expect(codes('/api/auth/logout', 'post')).toEqual([204, 403, 413, 415, 421, 422, 503])
  expect(codes('/readyz', 'get')).toEqual([200, 421, 503])
  expect(codes('/healthz', 'get')).toEqual([200, 421])
  expect(doc.paths['/api/admin/settings/test-salt'].post.requestBody.content['application/json'].schema.properties.url.format).toBe('uri')
  expect(JSON.stringify(doc)).not.toContain('http-url')
  for (const [path, ops] of Object.entries(doc.paths) as [string, any][])
    for (const op of Object.values(ops) as any[]) for (const [code, res] of Object.entries(op.responses) as [string, any][])
      if (Number(code) >= 400) expect([path, code, res.content['application/json'].schema.required]).toEqual([path, code, ['detail']])
})
