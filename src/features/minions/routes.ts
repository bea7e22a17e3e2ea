/** Minion list and detail, per-minion runs and packages (contract §7, §8). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, OneOf, paging } from '../../http/schemas'
import { RUN_STATUSES } from '../../salt/returns'
import { MinionDetailOut, MinionListOut, RunDetailOut, RunDiffOut, RunListOut } from './schema'
import { listMinions, minionDetail, MINION_STATUSES } from './service'
import { listRuns, runDiff, runWithDetail } from '../runs/service'
import { minionPackages } from '../inventory/service'
import { MinionPackagesOut } from '../inventory/schema'

const view = { verb: 'view', resource: 'minion:*' }
const MinionPath = T.Object({ minion_id: T.String({ minLength: 1, maxLength: 255 }) })

export const minionRoutes = [
  route({
    method: 'GET', path: '/api/minions', tag: 'minions', summary: 'List minions', access: view,
    query: T.Object({
      q: T.Optional(T.String({
        maxLength: 255,
        description: '`G@grain:glob` or `grain:glob`: a top-level grain, case-insensitive, any element of a list grain; text with `*`, `?` or `[`: salt glob on the whole id, case-sensitive; anything else: case-insensitive id substring',
      })),
      status: T.Optional(OneOf(MINION_STATUSES)),
      source: T.Optional(T.String({ maxLength: 64, description: 'Only minions seen through this salt source (an unknown one matches nothing)' })),
      ...paging(500, 100),
    }),
    response: MinionListOut,
    handler: ({ deps, query }) => listMinions(deps, query),
    csv: {
      filename: 'minions.csv', header: ['id', 'key_state', 'presence', 'online', 'last_seen', 'os', 'osrelease', 'ip', 'salt_version', 'last_run_status', 'last_run_at'],
      page: async ({ deps, query }, offset, limit) => (await listMinions(deps, { ...query, offset, limit })).minions.map((m) => [
        m.id, m.key_state, m.presence, m.online, m.last_seen, m.os, m.osrelease, m.ip, m.salt_version, m.last_run?.status, m.last_run?.completed_at,
      ]),
    },
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id', errors: [404], tag: 'minions', summary: 'One minion with its grains', access: view, params: MinionPath,
    response: MinionDetailOut,
    handler: ({ deps, params }) => minionDetail(deps, params.minion_id),
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/runs', tag: 'minions', summary: "A minion's state runs, newest first", access: view, params: MinionPath,
    query: T.Object({
      ...paging(200, 20), status: T.Optional(OneOf(RUN_STATUSES)), test: T.Optional(T.Boolean()),
      source: T.Optional(T.String({ maxLength: 64, description: 'Only runs whose return came through this salt source (an unknown one matches nothing)' })),
    }),
    response: RunListOut,
    handler: ({ deps, params, query }) => listRuns(deps, params.minion_id, query),
    csv: {
      filename: 'runs.csv', header: ['minion_id', 'jid', 'fun', 'completed_at', 'status', 'test', 'pass_count', 'fail_count', 'change_count', 'total_count', 'duration_ms', 'blocked', 'sls', 'source'],
      page: async ({ deps, params, query }, offset, limit) => (await listRuns(deps, params.minion_id, { ...query, offset, limit })).runs.map((r) => [
        params.minion_id, r.jid, r.fun, r.completed_at, r.status, r.test, r.pass_count, r.fail_count, r.change_count, r.total_count, r.duration_ms, r.blocked, r.sls, r.source,
      ]),
    },
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/runs/:jid', errors: [404], tag: 'minions', summary: 'One run with its states in Salt\'s order (or its render errors)', access: view,
    params: T.Object({ ...MinionPath.properties, jid: T.String({ minLength: 1, maxLength: 64 }) }),
    response: RunDetailOut,
    handler: ({ deps, params }) => runWithDetail(deps, params.minion_id, params.jid),
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/runs/:jid/diff', errors: [404], tag: 'minions', summary: 'The states whose outcome differs between two runs', access: view,
    params: T.Object({ ...MinionPath.properties, jid: T.String({ minLength: 1, maxLength: 64 }) }),
    query: T.Object({ against: Default(T.String({ minLength: 1, maxLength: 64 }), 'previous') }),
    response: RunDiffOut,
    handler: ({ deps, params, query }) => runDiff(deps, params.minion_id, params.jid, query.against),
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/packages', tag: 'minions', summary: "A minion's installed packages", access: view, params: MinionPath, response: MinionPackagesOut,
    query: T.Object({ q: T.Optional(T.String({ maxLength: 200 })), ...paging(500, 100) }),
    handler: ({ deps, params, query }) => minionPackages(deps, params.minion_id, query),
  }),
]
