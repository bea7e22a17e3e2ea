/** The answer schemas of the package inventory reads (contract §8): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'

/** The package row of interface.md. */
export const PackageRow = T.Object({ name: T.String(), minion_count: T.Integer(), version_count: T.Integer(), last_seen: T.String({ format: 'date-time' }) })
/** GET /api/inventory/packages. */
export const PackageListOut = T.Object({ total: T.Integer(), items: T.Array(PackageRow) })
/** GET /api/inventory/packages/{name}/versions: most common first. */
export const PackageVersionsOut = T.Object({ name: T.String(), total: T.Integer(), versions: T.Array(T.Object({ version: T.String(), arch: T.String(), source: T.String(), minion_count: T.Integer() })) })
/** One holder of a package: the minion and the package it holds (a binary of a source package, or the package itself). */
export const PackageHolderOut = T.Object({
  minion_id: T.String(), package: T.String(), version: T.String(), arch: T.String(), source: T.String(),
  /** The salt source (master) the minion's set was collected through (contract §15 "Several masters"). */
  salt_source: T.String(),
})
/** GET /api/inventory/packages/{name}/minions. */
export const PackageMinionsOut = T.Object({
  name: T.String(), binaries: T.Array(T.String(), { description: 'held packages built from this name as a source package' }), total: T.Integer(),
  minions: T.Array(PackageHolderOut),
})
/** POST /api/inventory/refresh (202): the refresh started. */
export const RefreshStartedOut = T.Object({ refresh_id: T.String({ format: 'uuid' }), started_at: T.String({ format: 'date-time' }) })
/** One inventory refresh: what it asked, what answered and stored, and its error. */
export const RefreshOut = T.Object({
  refresh_id: T.String({ format: 'uuid' }), started_at: T.String({ format: 'date-time' }), finished_at: T.Union([T.String({ format: 'date-time' }), T.Null()]), target: T.String(),
  minions_asked: T.Integer(), minions_answered: T.Integer(), packages_stored: T.Integer(), error: T.Union([T.String(), T.Null()]),
})
/** GET /api/inventory/status: the running refresh and the last finished one, each null when there is none. */
export const RefreshStatusOut = T.Object({ running: T.Boolean(), current: T.Union([RefreshOut, T.Null()]), last: T.Union([RefreshOut, T.Null()]) })
/** One package a minion holds. */
export const MinionPackageOut = T.Object({ name: T.String(), version: T.String(), arch: T.String(), source: T.String() })
/** GET /api/minions/{id}/packages: its set's packages by name (collected_at and salt_source null before its first collection). */
export const MinionPackagesOut = T.Object({
  minion_id: T.String(), collected_at: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  salt_source: T.Union([T.String(), T.Null()], { description: 'the salt source (master) the set was collected through (contract §15 "Several masters")' }),
  total: T.Integer(), packages: T.Array(MinionPackageOut),
})
