/** The answer schema of GET /api/batches/{id} (contract §16): schema-only, so the dashboard derives its type from it. */
import { Type as T } from '@sinclair/typebox'

/** One slice of a batch: its job (null until published), minions, returns and failures. */
const Slice = T.Object({
  jid: T.Union([T.String(), T.Null()]), minions: T.Array(T.String()), returned: T.Integer(), failed: T.Integer(),
  started_at: T.Union([T.String(), T.Null()]), finished_at: T.Union([T.String(), T.Null()]),
})

/** A batched run: its state and each slice's progress. */
export const BatchOut = T.Object({
  id: T.String(), state: T.Union([T.Literal('running'), T.Literal('done'), T.Literal('stopped'), T.Literal('failed')]), error: T.Union([T.String(), T.Null()]),
  initiator: T.String(), fun: T.String(), target: T.String(), tgt_type: T.String(), size: T.Integer(), batch_wait: T.Integer(), batch_stop_on_failure: T.Boolean(),
  created_at: T.String(), updated_at: T.String(), slices: T.Array(Slice),
})
