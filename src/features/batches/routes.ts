/** Batched runs (contract §16): a batch's state and its slices' progress. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { getBatch } from './service'

const Slice = T.Object({
  jid: T.Union([T.String(), T.Null()]), minions: T.Array(T.String()), returned: T.Integer(), failed: T.Integer(),
  started_at: T.Union([T.String(), T.Null()]), finished_at: T.Union([T.String(), T.Null()]),
})

/** GET /api/batches/{id}. */
export const batchRoutes = [
  route({
    method: 'GET', path: '/api/batches/:id', errors: [404], tag: 'jobs', summary: "A batched run: its state and each slice's job, minions, returns and failures",
    access: { verb: 'view', resource: 'job:*' },
    params: T.Object({ id: T.String({ minLength: 1, maxLength: 64 }) }),
    response: T.Object({
      id: T.String(), state: T.Union([T.Literal('running'), T.Literal('done'), T.Literal('stopped'), T.Literal('failed')]), error: T.Union([T.String(), T.Null()]),
      initiator: T.String(), fun: T.String(), target: T.String(), tgt_type: T.String(), size: T.Integer(), batch_wait: T.Integer(), batch_stop_on_failure: T.Boolean(),
      created_at: T.String(), updated_at: T.String(), slices: T.Array(Slice),
    }),
    handler: ({ deps, params }) => getBatch(deps, params.id),
  }),
]
