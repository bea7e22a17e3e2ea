/** The audit log read (contract §4). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { paging } from '../../http/schemas'
import { listAudit } from './service'
import { AuditListOut } from './schema'

export const auditRoutes = [
  route({
    method: 'GET', path: '/api/audit', tag: 'audit', summary: 'The audit log, newest first', access: { verb: 'view', resource: 'audit:*' }, response: AuditListOut,
    query: T.Object({
      user: T.Optional(T.String({ maxLength: 64 })), action: T.Optional(T.String({ maxLength: 64 })),
      since_minutes: T.Optional(T.Integer({ minimum: 1, maximum: 525600 })), ...paging(500, 100),
    }),
    handler: ({ deps, query }) => listAudit(deps, query),
    csv: {
      filename: 'audit.csv', header: ['id', 'ts', 'username', 'action', 'target', 'ok', 'detail', 'client'],
      page: async ({ deps, query }, offset, limit) => (await listAudit(deps, { ...query, offset, limit })).entries.map((e) => [e.id, e.ts, e.username, e.action, e.target, e.ok, e.detail, e.client]),
    },
  }),
]
