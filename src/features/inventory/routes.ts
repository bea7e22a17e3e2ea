/** The package inventory reads (interface.md GET /api/inventory/packages, contract §8). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { OneOf, paging } from '../../http/schemas'
import { NotFound } from '../../lib/errors'
import { listPackages, packageVersions, PACKAGE_SORTS, refreshStatus } from './service'
import { packageMinions, VERSION_OPS } from './version-query'
import { packagesThrough } from './salt-source-list'
import { PackageListOut, PackageMinionsOut, PackageVersionsOut, RefreshStatusOut } from './schema'
import { ValidationFailed, valueErrorEntry } from '../../http/errors'
import type { AppDeps } from '../../deps'

const view = { verb: 'view', resource: 'inventory:*' }
const Source = T.String({ minLength: 1, maxLength: 64 })
/** A salt source (master) by name; `source` here is the package system (contract §8), so the master is `salt_source`. */
const SaltSource = T.String({ maxLength: 64, description: 'Only minions whose packages were collected through this salt source (an unknown one matches nothing)' })

/** The minions holding a package (the version query), with its op and version checked together; 404 for an unknown package. */
async function holdersOf(deps: AppDeps, name: string, query: Parameters<typeof packageMinions>[2]) {
  // op and version only mean something together (contract §12): the missing one is named.
  if ((query.op === undefined) !== (query.version === undefined))
    throw new ValidationFailed([valueErrorEntry(['query', query.op === undefined ? 'op' : 'version'], 'op and version go together')])
  const out = await packageMinions(deps, name, query)
  if (!out) throw new NotFound('Package')
  return out
}

export const inventoryRoutes = [
  route({
    method: 'GET', path: '/api/inventory/packages', tag: 'inventory', summary: 'Fleet-wide packages, one row per name', access: view,
    query: T.Object({
      q: T.Optional(T.String({ maxLength: 200 })), source: T.Optional(Source),
      salt_source: T.Optional(T.String({ maxLength: 64, description: 'Only the minions whose packages were collected through this salt source, counted on request (an unknown one: an empty list)' })),
      sort: T.Optional(OneOf(PACKAGE_SORTS)), order: T.Optional(OneOf(['asc', 'desc'])), ...paging(500, 100),
    }),
    response: PackageListOut,
    handler: ({ deps, query: { salt_source, ...query } }) => (salt_source === undefined ? listPackages(deps, query) : packagesThrough(deps, { ...query, saltSource: salt_source })),
  }),
  route({
    method: 'GET', path: '/api/inventory/packages/:name/versions', errors: [404], tag: 'inventory', summary: 'Versions of one package, most common first', access: view,
    params: T.Object({ name: T.String({ minLength: 1, maxLength: 512 }) }), query: T.Object({ source: T.Optional(Source) }),
    response: PackageVersionsOut,
    async handler({ deps, params, query }) {
      const out = await packageVersions(deps, params.name, query.source)
      if (!out) throw new NotFound('Package')
      return out
    },
  }),
  route({
    method: 'GET', path: '/api/inventory/packages/:name/minions', errors: [404], tag: 'inventory', summary: 'Minions holding a package, optionally below/above a version', access: view,
    params: T.Object({ name: T.String({ minLength: 1, maxLength: 512 }) }),
    query: T.Object({
      source: T.Optional(Source), salt_source: T.Optional(SaltSource), op: T.Optional(OneOf(VERSION_OPS)), version: T.Optional(T.String({ minLength: 1, maxLength: 256 })),
      binaries: T.Optional(T.Boolean({ description: 'also the packages built from this source package (openssl: libssl3)' })), ...paging(1000, 100),
    }),
    response: PackageMinionsOut,
    handler: ({ deps, params, query }) => holdersOf(deps, params.name, query),
    csv: {
      filename: 'package-minions.csv', header: ['minion_id', 'package', 'version', 'arch', 'source', 'salt_source'],
      page: async ({ deps, params, query }, offset, limit) => (await holdersOf(deps, params.name, { ...query, offset, limit })).minions.map((m) => [m.minion_id, m.package, m.version, m.arch, m.source, m.salt_source]),
    },
  }),
  route({
    method: 'GET', path: '/api/inventory/status', tag: 'inventory', summary: 'The running and the last inventory refresh', access: view, response: RefreshStatusOut,
    handler: ({ deps }) => refreshStatus(deps),
  }),
]
