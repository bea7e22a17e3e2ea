/** GET /api/cluster: the running instances and what each leads (contract §15). */
import { route } from '../../http/route'
import { ClusterOut } from './schema'
import { listInstances } from './service'

export const instanceRoutes = [
  route({
    method: 'GET', path: '/api/cluster', tag: 'system', summary: 'The running Saltdeck instances on this database and the salt sources each leads',
    access: { verb: 'view', resource: 'setting:*' }, response: ClusterOut, handler: ({ deps }) => listInstances(deps),
  }),
]
