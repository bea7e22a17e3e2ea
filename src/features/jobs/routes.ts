/** The job reads and the key list (contract §7); the actions (run, kill, key accept/reject/delete) are in features/salt-actions/routes.ts. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, paging } from '../../http/schemas'
import { jobDetail, listJobs } from './service'
import { listKeys } from '../minions/service'

export const jobRoutes = [
  route({
    method: 'GET', path: '/api/jobs', tag: 'jobs', summary: 'Jobs, newest first', access: { verb: 'view', resource: 'job:*' },
    query: T.Object({ fun: T.Optional(T.String({ maxLength: 255 })), user: T.Optional(T.String({ maxLength: 255 })), include_internal: Default(T.Boolean(), false), ...paging(500, 100) }),
    handler: ({ deps, query }) => listJobs(deps, query),
  }),
  route({
    method: 'GET', path: '/api/jobs/:jid', errors: [404], tag: 'jobs', summary: 'One job with its per-minion returns', access: { verb: 'view', resource: 'job:*' },
    params: T.Object({ jid: T.String({ minLength: 1, maxLength: 64 }) }),
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
