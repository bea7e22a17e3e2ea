/** GET /api/salt/health: the Salt health view (view minion:*). */
import { route } from '../../http/route'
import { saltHealth } from './service'
import { HealthOut } from './schema'

export const saltHealthRoutes = [
  route({
    method: 'GET', path: '/api/salt/health', tag: 'salt', summary: "Salt health: versions, salt-api, the master, event stream, pollers, known faults", access: { verb: 'view', resource: 'minion:*' },
    response: HealthOut, handler: ({ deps }) => saltHealth(deps),
  }),
]
