/** The answer schema of GET /api/cluster (schema-only: shared with the dashboard). */
import { Type as T } from '@sinclair/typebox'

/** One running instance and the leaderships it holds (salt source names, and `fleet` for fleet-wide work). */
export const InstanceOut = T.Object({
  id: T.String(),
  hostname: T.String(),
  version: T.String(),
  engine: T.Union([T.Literal('sqlite'), T.Literal('postgres')]),
  started_at: T.String({ format: 'date-time' }),
  last_seen_at: T.String({ format: 'date-time' }),
  leads: T.Array(T.String()),
})

/** GET /api/cluster. */
export const ClusterOut = T.Object({ instances: T.Array(InstanceOut) })
