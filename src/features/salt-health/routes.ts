/** GET /api/salt/health: the Salt health view (view minion:*). */
import { route } from '../../http/route'
import { holds } from '../roles/service'
import { saltHealth } from './service'
import { HealthOut } from './schema'

export const saltHealthRoutes = [
  route({
    method: 'GET', path: '/api/salt/health', tag: 'salt', summary: "Salt health: versions, salt-api, the master, event stream, pollers, known faults", access: { verb: 'view', resource: 'minion:*' },
    // Which instance leads is named (id, hostname) to those who may list the instances (GET /api/cluster's permission).
    response: HealthOut, handler: ({ deps, principal }) => saltHealth(deps, { namesInstances: holds(principal.grants, 'view', 'setting:*') }),
  }),
]
