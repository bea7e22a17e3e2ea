/** Batched runs (contract §16): a batch's state and its slices' progress. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { getBatch } from './service'
import { BatchOut } from './schema'

/** GET /api/batches/{id}. */
export const batchRoutes = [
  route({
    method: 'GET', path: '/api/batches/:id', errors: [404], tag: 'jobs', summary: "A batched run: its state and each slice's job, minions, returns and failures",
    access: { verb: 'view', resource: 'job:*' },
    params: T.Object({ id: T.String({ minLength: 1, maxLength: 64 }) }),
    response: BatchOut,
    handler: ({ deps, params }) => getBatch(deps, params.id),
  }),
]
