/** The job reads and the key list (contract §7); the actions (run, kill, key accept/reject/delete) are in features/salt-actions/routes.ts. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, Nullable, paging } from '../../http/schemas'
import { jobDetail, listJobs } from './service'
import { listKeys } from '../minions/service'

const Str = Nullable(T.String())
const Time = Nullable(T.String({ format: 'date-time' }))

/** A job record: `arg` as salt published it, and its positional and keyword arguments apart. */
const JobOut = T.Object({
  jid: T.String(), fun: Str, target: Str, tgt_type: Str, user: Str, initiator: Str, internal: T.Boolean(), started_at: T.String({ format: 'date-time' }),
  arg: T.Unknown({ description: "The arguments as salt published them: one list, keyword arguments inside it as an object with `__kwarg__: true` (null when salt did not say)" }),
  arguments: Nullable(T.Array(T.Unknown(), { description: 'Positional arguments: `arg` without its keyword objects' })),
  kwargs: Nullable(T.Record(T.String(), T.Unknown(), { description: 'Keyword arguments: the `__kwarg__` objects of `arg` merged, without the marker' })),
  minions: Nullable(T.Array(T.String())), returned: T.Integer(), failed: T.Integer(), sls: T.Array(T.String()),
  killed_at: Time, killed_by: Str, running: T.Boolean(),
  status: T.Union([T.Literal('running'), T.Literal('finished'), T.Literal('killed')], {
    description: '`killed` once killed through Saltdeck (whatever returned after), else `running` while returns are waited for, else `finished`',
  }),
})

export const jobRoutes = [
  route({
    method: 'GET', path: '/api/jobs', tag: 'jobs', summary: 'Jobs, newest first', access: { verb: 'view', resource: 'job:*' },
    query: T.Object({ fun: T.Optional(T.String({ maxLength: 255 })), user: T.Optional(T.String({ maxLength: 255 })), include_internal: Default(T.Boolean(), false), ...paging(500, 100) }),
    response: T.Object({ total: T.Integer(), jobs: T.Array(JobOut) }),
    handler: ({ deps, query }) => listJobs(deps, query),
    csv: {
      filename: 'jobs.csv', header: ['jid', 'fun', 'target', 'tgt_type', 'initiator', 'started_at', 'arguments', 'kwargs', 'minion_count', 'returned', 'failed', 'killed_at', 'killed_by', 'running'],
      page: async ({ deps, query }, offset, limit) => (await listJobs(deps, { ...query, offset, limit })).jobs.map((j) => [
        j.jid, j.fun, j.target, j.tgt_type, j.initiator, j.started_at, j.arguments && JSON.stringify(j.arguments), j.kwargs, j.minions?.length, j.returned, j.failed, j.killed_at, j.killed_by, j.running,
      ]),
    },
  }),
  route({
    method: 'GET', path: '/api/jobs/:jid', errors: [404], tag: 'jobs', summary: 'One job with its per-minion returns', access: { verb: 'view', resource: 'job:*' },
    params: T.Object({ jid: T.String({ minLength: 1, maxLength: 64 }) }),
    response: T.Composite([JobOut, T.Object({
      returns: T.Array(T.Object({ minion_id: T.String(), success: Nullable(T.Boolean()), retcode: Nullable(T.Integer()), return: T.Unknown(), received_at: T.String({ format: 'date-time' }) })),
      children: T.Array(T.Object({
        jid: T.String(), step: Str, job: Nullable(JobOut),
      }), { description: "A runner job's child jobs (an orchestration's steps, named by `__jid__` in its return) with their records once indexed; empty for other jobs" }),
    })]),
    handler: ({ deps, params }) => jobDetail(deps, params.jid),
  }),
  route({
    method: 'GET', path: '/api/keys', tag: 'keys', summary: 'Minion keys by state', access: { verb: 'view', resource: 'key:*' },
    response: T.Object({
      accepted: T.Array(T.String()), pending: T.Array(T.String()), rejected: T.Array(T.String()), denied: T.Array(T.String()),
      fingerprints: T.Record(T.String(), T.String(), { description: 'Key fingerprint by minion id (wheel key.finger), for the keys the keys poller has read one of' }),
    }),
    handler: ({ deps }) => listKeys(deps),
  }),
]
