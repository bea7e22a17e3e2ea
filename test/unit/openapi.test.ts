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
