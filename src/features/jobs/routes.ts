/** The job reads and the key list (contract §7); the actions (run, kill, key accept/reject/delete) are in features/salt-actions/routes.ts. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, paging } from '../../http/schemas'
import { jobDetail, listJobs } from './service'
import { JobDetailOut, JobListOut, KeyListsOut } from './schema'
import { listKeys } from '../minions/service'

export const jobRoutes = [
  route({
    method: 'GET', path: '/api/jobs', tag: 'jobs', summary: 'Jobs, newest first', access: { verb: 'view', resource: 'job:*' },
    query: T.Object({ fun: T.Optional(T.String({ maxLength: 255 })), user: T.Optional(T.String({ maxLength: 255 })),
      source: T.Optional(T.String({ maxLength: 64, description: 'Only jobs seen through this salt source (an unknown one matches nothing)' })), include_internal: Default(T.Boolean(), false), ...paging(500, 100) }),
    response: JobListOut,
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
    response: JobDetailOut,
    handler: ({ deps, params }) => jobDetail(deps, params.jid),
  }),
  route({
    method: 'GET', path: '/api/keys', tag: 'keys', summary: 'Minion keys by state', access: { verb: 'view', resource: 'key:*' },
    query: T.Object({ source: T.Optional(T.String({ maxLength: 64, description: 'Only the keys of minions seen through this salt source (an unknown one lists none)' })) }),
    response: KeyListsOut,
    handler: ({ deps, query }) => listKeys(deps, query.source),
  }),
]
