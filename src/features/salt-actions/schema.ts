/** The answer schemas of the salt actions (the connection tests, the run scope and preview): schema-only, so the dashboard derives its types from them. */
import { Type as T } from '@sinclair/typebox'

/** The answer of both salt-api connection tests. */
export const SaltTestOut = T.Object({ ok: T.Boolean(), detail: T.String(), minion_count: T.Union([T.Integer(), T.Null()]) })
/** One execute grant: the functions (`salt:<glob>`) and the minions (salt's glob on ids) it allows. */
export const RunGrantOut = T.Object({ resource_glob: T.String(), target_glob: T.String() })
/** GET /api/run/scope. */
export const RunScopeOut = T.Object({ grants: T.Array(RunGrantOut) })
/** POST /api/run/preview: the minions salt matches (the first 1,000), those outside the caller's grants, and whether fun is allowed. */
export const RunPreviewOut = T.Object({
  count: T.Integer({ minimum: 0 }),
  minions: T.Array(T.String()),
  outside_scope: T.Array(T.String()),
  functions_allowed: T.Union([T.Boolean(), T.Null()]),
})
