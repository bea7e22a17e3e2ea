// Proves the embedded migrations, the OpenAPI document, Python-worded JSON errors and glob matching.
import { expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.gen'
import { allRoutes } from '../../src/app'
import { openApiDocument } from '../../src/http/openapi'
import { findJsonProblem } from '../../src/http/json'
import { globMatch } from '../../src/lib/glob'

test('the embedded migration module holds every drizzle/ migration and migrates :memory:', () => {
  expect(migrations.map((m) => `${m.tag}.sql`)).toEqual(readdirSync('drizzle').filter((f) => f.endsWith('.sql')).sort())
  const db = openDb(':memory:')
  migrate(db)
  migrate(db) // applying twice is a no-op
  const tables = db.$client.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((t) => t.name)
  expect(tables).toEqual(expect.arrayContaining(['users', 'roles', 'role_permissions', 'user_roles', 'sessions', 'settings', 'audit_log', 'minions', 'jobs', 'runs', 'activity_events', 'activity_counts', 'minion_package_sets', 'package_keys', 'package_stats', 'package_versions', 'inventory_refreshes']))
})

test('a file database runs in WAL mode with foreign keys and synchronous=NORMAL', () => {
  const path = `${require('node:os').tmpdir()}/sd-pragma-${process.pid}.db`
  const db = openDb(path)
  const q = (p: string) => Object.values(db.$client.query(`PRAGMA ${p}`).get() as object)[0]
  expect(q('journal_mode')).toBe('wal')
  expect(q('foreign_keys')).toBe(1)
  expect(q('synchronous')).toBe(1)
  expect(q('busy_timeout')).toBe(5000)
  db.$client.close()
})

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

test.each([
  ['{"a": [1, 2}', 11, "Expecting ',' delimiter"],
  ['"\\x"', 1, 'Invalid \\escape'],
  ['"a\nb"', 2, 'Invalid control character at'],
  ['  ', 2, 'Expecting value'],
  ['{"a": 1,}', 8, 'Expecting property name enclosed in double quotes'],
  ['-', 0, 'Expecting value'],
])('findJsonProblem(%p) is at %p: %s', (text, pos, error) => {
  expect(findJsonProblem(text)).toEqual({ pos, error })
})

test.each(['{}', '[1, {"a": null}]', '"\\u00e9"', '-0.5e+3', ' true '])('findJsonProblem(%p) is null for valid JSON', (text) => {
  expect(findJsonProblem(text)).toBeNull()
})

test.each([
  ['*', 'anything', true], ['view', 'view', true], ['view', 'viewer', false], ['key:*', 'key:web-01', true], ['key:*', 'minion:*', false],
  ['?iew', 'view', true], ['a.b', 'axb', false], ['job:*', 'job:*', true],
])('globMatch(%p, %p) is %p', (g, v, want) => expect(globMatch(g, v)).toBe(want))
