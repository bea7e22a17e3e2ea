/** Minion list and detail, per-minion runs and packages (contract §7, §8). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Nullable, OneOf, paging } from '../../http/schemas'
import { RUN_STATUSES } from '../../salt/returns'
import { listMinions, minionDetail, MINION_STATUSES } from './service'
import { listRuns } from '../runs/service'
import { minionPackages } from '../inventory/service'

const view = { verb: 'view', resource: 'minion:*' }
const MinionPath = T.Object({ minion_id: T.String({ minLength: 1, maxLength: 255 }) })

/** The Minion run record. */
export const RunOut = T.Object({
  id: T.String({ format: 'uuid' }), jid: T.String(), fun: T.String(), completed_at: T.String({ format: 'date-time' }), pass_count: T.Integer(),
  fail_count: T.Integer(), change_count: T.Integer(), total_count: T.Integer(), duration_ms: T.Integer(), blocked: T.Boolean(), status: OneOf(RUN_STATUSES),
})

const MinionSummary = {
  id: T.String(), key_state: Nullable(T.String()), online: T.Boolean(),
  /** `online`/`offline` as last known, or `unknown` while salt-api does not answer. */
  presence: OneOf(['online', 'offline', 'unknown'] as const), last_seen: Nullable(T.String({ format: 'date-time' })), os: Nullable(T.String()),
  osrelease: Nullable(T.String()), ip: Nullable(T.String()), salt_version: Nullable(T.String()),
  last_run: Nullable(T.Object({ status: T.String(), completed_at: T.String({ format: 'date-time' }) })),
}

export const minionRoutes = [
  route({
    method: 'GET', path: '/api/minions', tag: 'minions', summary: 'List minions', access: view,
    query: T.Object({
      q: T.Optional(T.String({
        maxLength: 255,
        description: '`G@grain:glob` or `grain:glob`: a top-level grain, case-insensitive, any element of a list grain; text with `*`, `?` or `[`: salt glob on the whole id, case-sensitive; anything else: case-insensitive id substring',
      })),
      status: T.Optional(OneOf(MINION_STATUSES)), ...paging(500, 100),
    }),
    response: T.Object({ total: T.Integer(), minions: T.Array(T.Object(MinionSummary)) }),
    handler: ({ deps, query }) => listMinions(deps, query),
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id', errors: [404], tag: 'minions', summary: 'One minion with its grains', access: view, params: MinionPath,
    response: T.Object({ ...MinionSummary, key_fingerprint: Nullable(T.String({ description: "The key's fingerprint as salt's wheel key.finger reports it; null until the keys poller has read it" })), grains: T.Record(T.String(), T.Unknown()) }),
    handler: ({ deps, params }) => minionDetail(deps, params.minion_id),
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/runs', tag: 'minions', summary: "A minion's state runs, newest first", access: view, params: MinionPath,
    query: T.Object({ ...paging(200, 20), status: T.Optional(OneOf(RUN_STATUSES)) }),
    response: T.Object({ minion_id: T.String(), total: T.Integer(), runs: T.Array(RunOut) }),
    handler: ({ deps, params, query }) => listRuns(deps, params.minion_id, query),
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/packages', tag: 'minions', summary: "A minion's installed packages", access: view, params: MinionPath,
    query: T.Object({ q: T.Optional(T.String({ maxLength: 200 })), ...paging(500, 100) }),
    handler: ({ deps, params, query }) => minionPackages(deps, params.minion_id, query),
  }),
]
