/** Fleet health over time (contract §13): summary, daily trend and the states failing now. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default } from '../../http/schemas'
import { failingStates, runSummary, runTrend } from './health'

const view = { verb: 'view', resource: 'minion:*' }
const Counts = { healthy: T.Integer(), changed: T.Integer(), unhealthy: T.Integer(), blocked: T.Integer(), never: T.Integer() }

export const runRoutes = [
  route({
    method: 'GET', path: '/api/runs/summary', tag: 'runs', summary: "Accepted minions by their last real run's status", access: view,
    response: T.Object({ minions: T.Integer(), by_status: T.Object(Counts) }),
    handler: ({ deps }) => runSummary(deps),
  }),
  route({
    method: 'GET', path: '/api/runs/trend', tag: 'runs', summary: 'One point per UTC day: minions by the status of their last real run then', access: view,
    query: T.Object({ days: Default(T.Integer({ minimum: 1, maximum: 365 }), 30) }),
    response: T.Object({ days: T.Integer(), points: T.Array(T.Object({ day: T.String({ format: 'date' }), ...Counts })) }),
    handler: ({ deps, query }) => runTrend(deps, query.days),
  }),
  route({
    method: 'GET', path: '/api/runs/failing-states', tag: 'runs', summary: 'The states failing now on the most minions', access: view,
    query: T.Object({ since_minutes: T.Optional(T.Integer({ minimum: 1, maximum: 525600 })), limit: Default(T.Integer({ minimum: 1, maximum: 200 }), 20) }),
    response: T.Object({
      items: T.Array(T.Object({ id: T.String(), sls: T.String(), function: T.String(), minion_count: T.Integer(), last_failed_at: T.String({ format: 'date-time' }), sample_comment: T.String() })),
    }),
    handler: ({ deps, query }) => failingStates(deps, query),
  }),
]
