// Proves the per-route permission table of contract §4: every route against no session, a role-less user, viewer, operator and admin.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, testWorld, type Who } from '../helpers/app'
import { allRoutes } from '../../src/app'

let w: Awaited<ReturnType<typeof testWorld>>
let roleId: string
let userId: string
beforeAll(async () => {
  w = await testWorld()
  roleId = w.roleId('viewer')
  userId = (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === 'nobody').id
})

const WHO: Who[] = ['anon', 'nobody', 'viewer', 'operator', 'admin']
const UUID0 = '00000000-0000-4000-8000-000000000000'
type Row = [method: string, path: () => string, expected: number[], body?: unknown]
// Expected status for [anon, nobody, viewer, operator, admin]. Write routes aim at missing records (404) so the matrix changes nothing.
const ADMIN_ONLY_200 = [401, 403, 403, 403, 200]
const ADMIN_ONLY_422 = [401, 403, 403, 403, 422]
const MATRIX: Row[] = [
  ['GET', () => '/api/admin/settings', ADMIN_ONLY_200],
  ['PUT', () => '/api/admin/settings/pollers', ADMIN_ONLY_200, {}],
  ['PUT', () => '/api/admin/settings/widget', ADMIN_ONLY_200, {}],
  ['PUT', () => '/api/admin/settings/logging', ADMIN_ONLY_200, {}],
  ['PUT', () => '/api/admin/settings/salt', ADMIN_ONLY_200, { verify: true }],
  ['GET', () => '/api/admin/settings/status', ADMIN_ONLY_200],
  ['GET', () => '/api/admin/salt-sources', ADMIN_ONLY_200],
  ['POST', () => '/api/admin/salt-sources', ADMIN_ONLY_422, {}],
  ['GET', () => '/api/admin/salt-sources/web-01', [401, 403, 403, 403, 404]],
  ['PUT', () => '/api/admin/salt-sources/web-01', [401, 403, 403, 403, 404], { verify: true }],
  ['DELETE', () => '/api/admin/salt-sources/web-01', [401, 403, 403, 403, 404]],
  ['GET', () => '/api/admin/identity', ADMIN_ONLY_200],
  ['PUT', () => '/api/admin/identity/ldap', ADMIN_ONLY_200, {}],
  ['PUT', () => '/api/admin/identity/oidc', ADMIN_ONLY_200, {}],
  ['POST', () => '/api/admin/identity/ldap/test', ADMIN_ONLY_200],
  ['POST', () => '/api/admin/identity/oidc/test', ADMIN_ONLY_200],
  ['GET', () => '/api/admin/identity/mappings', ADMIN_ONLY_200],
  ['POST', () => '/api/admin/identity/mappings', ADMIN_ONLY_422, {}],
  ['DELETE', () => `/api/admin/identity/mappings/${UUID0}`, [401, 403, 403, 403, 404]],
  ['GET', () => '/api/activity/widget-config', [401, 200, 200, 200, 200]],
  ['GET', () => '/api/activity', [401, 200, 200, 200, 200]],
  ['GET', () => '/api/activity/stream?after_id=-1', [401, 422, 422, 422, 422]],
  ['GET', () => '/api/auth/me', [401, 200, 200, 200, 200]],
  ['GET', () => '/api/auth/tokens', [401, 200, 200, 200, 200]],
  ['GET', () => '/api/auth/me/preferences', [401, 200, 200, 200, 200]],
  ['PUT', () => '/api/auth/me/preferences', [401, 422, 422, 422, 422], {}],
  ['POST', () => '/api/auth/tokens', [401, 422, 422, 422, 422], { name: '' }],
  ['DELETE', () => `/api/auth/tokens/${UUID0}`, [401, 404, 404, 404, 404]],
  ['POST', () => '/api/auth/change-password', [401, 422, 422, 422, 422], {}],
  ['POST', () => '/api/auth/login', [422, 422, 422, 422, 422], {}],
  // Public: the login page's choices, and the OpenID Connect redirects (OIDC is off: back to the login page).
  ['GET', () => '/api/auth/providers', [200, 200, 200, 200, 200]],
  ['GET', () => '/api/auth/oidc/start', [302, 302, 302, 302, 302]],
  ['GET', () => '/api/auth/oidc/callback?code=x&state=y', [302, 302, 302, 302, 302]],
  ['GET', () => '/api/roles', [401, 403, 403, 200, 200]],
  ['GET', () => `/api/roles/${roleId}`, [401, 403, 403, 200, 200]],
  ['POST', () => '/api/roles', [401, 403, 403, 403, 422], { name: '' }],
  ['PATCH', () => `/api/roles/${UUID0}`, [401, 403, 403, 403, 404], {}],
  ['DELETE', () => `/api/roles/${UUID0}`, [401, 403, 403, 403, 404]],
  ['POST', () => `/api/roles/${UUID0}/permissions`, [401, 403, 403, 403, 404], { verb: 'view', resource_glob: '*' }],
  ['DELETE', () => `/api/roles/${UUID0}/permissions/${UUID0}`, [401, 403, 403, 403, 404]],
  ['GET', () => '/api/users', [401, 403, 403, 200, 200]],
  ['GET', () => `/api/users/${userId}`, [401, 403, 403, 200, 200]],
  ['GET', () => `/api/users/${userId}/roles`, [401, 403, 403, 200, 200]],
  ['POST', () => '/api/users', [401, 403, 403, 403, 422], {}],
  ['PATCH', () => `/api/users/${UUID0}`, [401, 403, 403, 403, 404], {}],
  ['DELETE', () => `/api/users/${UUID0}`, [401, 403, 403, 403, 404]],
  ['POST', () => `/api/users/${UUID0}/password`, [401, 403, 403, 403, 404], { new_password: 'long-enough-1' }],
  ['PUT', () => `/api/users/${UUID0}/roles`, [401, 403, 403, 403, 404], { role_ids: [] }],
  ['GET', () => '/api/minions', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/salt/health', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/cluster', [401, 403, 403, 200, 200]],
  ['GET', () => '/api/alerts', [401, 403, 200, 200, 200]],
  ['GET', () => `/api/alerts/${UUID0}`, [401, 403, 404, 404, 404]],
  ['POST', () => `/api/alerts/${UUID0}/ack`, [401, 403, 403, 404, 404]],
  ['GET', () => '/api/alerts/rules', [401, 403, 200, 200, 200]],
  ['POST', () => '/api/alerts/rules', [401, 403, 403, 403, 422], {}],
  ['GET', () => `/api/alerts/rules/${UUID0}`, [401, 403, 404, 404, 404]],
  ['PATCH', () => `/api/alerts/rules/${UUID0}`, [401, 403, 403, 403, 404], {}],
  ['DELETE', () => `/api/alerts/rules/${UUID0}`, [401, 403, 403, 403, 404]],
  ['GET', () => '/api/alerts/silences', [401, 403, 200, 200, 200]],
  ['POST', () => '/api/alerts/silences', [401, 403, 403, 403, 422], {}],
  ['DELETE', () => `/api/alerts/silences/${UUID0}`, [401, 403, 403, 403, 404]],
  ['GET', () => '/api/alerts/channels', [401, 403, 200, 200, 200]],
  ['POST', () => '/api/alerts/channels', [401, 403, 403, 403, 422], {}],
  ['GET', () => `/api/alerts/channels/${UUID0}`, [401, 403, 404, 404, 404]],
  ['PATCH', () => `/api/alerts/channels/${UUID0}`, [401, 403, 403, 403, 404], {}],
  ['DELETE', () => `/api/alerts/channels/${UUID0}`, [401, 403, 403, 403, 404]],
  ['POST', () => `/api/alerts/channels/${UUID0}/test`, [401, 403, 403, 403, 404]],
  ['GET', () => '/api/alerts/deliveries', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/runs/summary', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/runs/trend', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/runs/failing-states', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/minions/web-01/runs/20261121080000000000', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/minions/web-01/runs/20261121080000000000/diff', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/minions/web-01', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/minions/web-01/runs', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/minions/web-01/packages', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/inventory/packages', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/inventory/packages/bash/versions', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/inventory/status', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/inventory/packages/bash/minions', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/vulns', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/vulns/feeds', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/vulns/web-01', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/minions/web-01/vulns', [401, 403, 404, 404, 404]],
  ['POST', () => '/api/vulns/import', [401, 403, 403, 403, 422], {}],
  ['GET', () => '/api/jobs', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/jobs/20261121080000000000', [401, 403, 404, 404, 404]],
  ['GET', () => '/api/keys', [401, 403, 200, 200, 200]],
  ['GET', () => '/api/audit', [401, 403, 403, 200, 200]],
  // Salt-driven routes: this world has no salt runtime, so an allowed caller gets 503 (or 422/404 first).
  ['POST', () => '/api/admin/settings/test-salt', ADMIN_ONLY_422, {}],
  ['POST', () => '/api/admin/settings/test-salt-saved', ADMIN_ONLY_200],
  ['GET', () => '/api/admin/pollers', [401, 403, 403, 403, 503]],
  ['POST', () => '/api/admin/pollers/keys/run', [401, 403, 403, 403, 503]],
  ['POST', () => '/api/keys/web-01/accept', [401, 403, 403, 503, 503]],
  ['POST', () => '/api/keys/web-01/reject', [401, 403, 403, 503, 503]],
  ['DELETE', () => '/api/keys/web-01', [401, 403, 403, 503, 503]],
  ['GET', () => '/api/run/scope', [401, 200, 200, 200, 200]],
  ['POST', () => '/api/run', [401, 403, 403, 422, 422], {}],
  ['GET', () => '/api/templates', [401, 200, 200, 200, 200]],
  ['POST', () => '/api/templates', [401, 403, 403, 422, 422], {}],
  ['GET', () => `/api/templates/${UUID0}`, [401, 404, 404, 404, 404]],
  ['PATCH', () => `/api/templates/${UUID0}`, [401, 403, 403, 404, 404], { description: 'x' }],
  ['DELETE', () => `/api/templates/${UUID0}`, [401, 403, 403, 404, 404]],
  ['POST', () => `/api/templates/${UUID0}/run`, [401, 403, 403, 404, 404], {}],
  ['GET', () => '/api/schedules', [401, 200, 200, 200, 200]],
  ['POST', () => '/api/schedules', [401, 403, 403, 422, 422], {}],
  ['GET', () => `/api/schedules/${UUID0}`, [401, 404, 404, 404, 404]],
  ['PATCH', () => `/api/schedules/${UUID0}`, [401, 403, 403, 404, 404], { enabled: false }],
  ['DELETE', () => `/api/schedules/${UUID0}`, [401, 403, 403, 404, 404]],
  ['POST', () => '/api/run/preview', [401, 403, 403, 422, 422], {}],
  ['GET', () => `/api/batches/${UUID0}`, [401, 403, 404, 404, 404]],
  ['POST', () => '/api/jobs/20261121080000000000/kill', [401, 403, 403, 404, 404]],
  ['POST', () => '/api/inventory/refresh', [401, 403, 403, 503, 503], {}],
  ['GET', () => '/healthz', [200, 200, 200, 200, 200]],
  ['GET', () => '/readyz', [200, 200, 200, 200, 200]],
  ['GET', () => '/api/version', [200, 200, 200, 200, 200]],
  ['GET', () => '/api/openapi.json', [200, 200, 200, 200, 200]],
  // view metrics:* (operator's (view, *), admin's (*, *)), by session or API token alike.
  ['GET', () => '/metrics', [401, 403, 403, 200, 200]],
  // Last: it ends each caller's session.
  ['POST', () => '/api/auth/logout', [204, 204, 204, 204, 204]],
]

test('the matrix lists every route of the app', () => {
  const norm = (p: string) => p.replace(/:[a-z_]+/g, ':x')
  const inMatrix = new Set(MATRIX.map(([m, p]) => `${m} ${norm(p().split('?')[0]!.replace(/[0-9a-f]{8}-[0-9a-f-]{27}|web-01|bash|20261121080000000000|keys(?=\/run)/g, ':x'))}`))
  const routes = allRoutes().map((r) => `${r.method} ${norm(r.path)}`)
  expect(routes.filter((r) => !inMatrix.has(r))).toEqual([])
})

describe.each(MATRIX)('%s %s', (method, path, expected, body) => {
  test.each(WHO.map((who, i) => [who, expected[i]!] as const))('as %p → %p', async (who, status) => {
    const r = await call(w, method, path(), { who, body })
    expect(r.status).toBe(status)
    if (status === 401 && path() !== '/api/auth/login') expect(r.body).toEqual({ detail: 'Not authenticated' })
    if (status === 403) expect(r.body).toEqual({ detail: 'Forbidden' })
  })
})

test('a role-less user sees an empty activity list', async () => {
  w = await testWorld()
  expect((await call(w, 'GET', '/api/activity', { who: 'nobody' })).body).toEqual({ total: 0, events: [] })
})
