/** Fleet health over time (contract §13): summary, daily trend and the states failing now. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default } from '../../http/schemas'
import { failingStates, runSummary, runTrend } from './health'
import { FailingStatesOut, RunSummaryOut, TrendOut } from './schema'

const view = { verb: 'view', resource: 'minion:*' }

export const runRoutes = [
  route({
    method: 'GET', path: '/api/runs/summary', tag: 'runs', summary: "Accepted minions by their last real run's status", access: view,
    response: RunSummaryOut,
    handler: ({ deps }) => runSummary(deps),
  }),
  route({
    method: 'GET', path: '/api/runs/trend', tag: 'runs', summary: 'One point per UTC day: minions by the status of their last real run then', access: view,
    query: T.Object({ days: Default(T.Integer({ minimum: 1, maximum: 365 }), 30) }),
    response: TrendOut,
    handler: ({ deps, query }) => runTrend(deps, query.days),
  }),
  route({
    method: 'GET', path: '/api/runs/failing-states', tag: 'runs', summary: 'The states failing now on the most minions', access: view,
    query: T.Object({ since_minutes: T.Optional(T.Integer({ minimum: 1, maximum: 525600 })), limit: Default(T.Integer({ minimum: 1, maximum: 200 }), 20) }),
    response: FailingStatesOut,
    handler: ({ deps, query }) => failingStates(deps, query),
  }),
]
