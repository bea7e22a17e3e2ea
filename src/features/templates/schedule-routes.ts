/** Schedules (contract §16): a template run on a cron in a time zone, as its creator; every write audited. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, PlainText } from '../../http/schemas'
import { ValidationFailed, valueErrorEntry } from '../../http/errors'
import { holds, type Grant } from '../roles/service'
import { ScheduleListOut, ScheduleOut } from './schema'
import { createSchedule, cronProblem, deleteSchedule, getSchedule, listSchedules, updateSchedule } from './schedules'

const EXECUTE = { scoped: [{ verb: 'execute', kind: 'salt' }, { verb: 'execute', kind: 'runner' }], doc: '`execute` of any kind; a schedule is changed only by its creator or with `manage template:*`' }
const Id = T.Object({ id: T.String({ format: 'uuid' }) })
const Fields = {
  name: PlainText(1, 128, true),
  template_id: T.String({ format: 'uuid' }),
  cron: T.String({ minLength: 1, maxLength: 255, description: 'five fields: minute hour day-of-month month day-of-week' }),
  timezone: T.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone' }),
  enabled: T.Boolean(),
}
const caller = (p: { userId: string; grants: Grant[] }) => ({ userId: p.userId, manageAll: holds(p.grants, 'manage', 'template:*') })

/** A 422 on the cron or the zone when croner cannot use them. */
function checkCron(cron: string, timezone: string) {
  const p = cronProblem(cron, timezone)
  if (p) throw new ValidationFailed([valueErrorEntry(['body', p.field], p.sentence, p.field === 'cron' ? cron : timezone)])
}

/** The schedule routes. */
export const scheduleRoutes = [
  route({
    method: 'GET', path: '/api/schedules', tag: 'templates', summary: 'Every schedule with its next and last run', access: 'login',
    response: ScheduleListOut,
    handler: ({ deps }) => listSchedules(deps),
  }),
  route({
    method: 'POST', path: '/api/schedules', errors: [404, 409], tag: 'templates', summary: 'Schedule a template; it fires as the caller', access: EXECUTE, status: 201, response: ScheduleOut,
    body: T.Object({ name: Fields.name, template_id: Fields.template_id, cron: Fields.cron, timezone: Default(Fields.timezone, 'UTC'), enabled: Default(Fields.enabled, true) }, { additionalProperties: false }),
    async handler({ deps, principal, body }) {
      checkCron(body.cron, body.timezone)
      return createSchedule(deps, principal.userId, body)
    },
    audit: { action: 'schedule.create', target: (_, r) => r.name },
  }),
  route({
    method: 'GET', path: '/api/schedules/:id', errors: [404], tag: 'templates', summary: 'One schedule', access: 'login', params: Id, response: ScheduleOut,
    handler: ({ deps, params }) => getSchedule(deps, params.id),
  }),
  route({
    method: 'PATCH', path: '/api/schedules/:id', errors: [404, 409], tag: 'templates', summary: 'Change, enable or disable a schedule (its creator, or `manage template:*`)', access: EXECUTE, params: Id, response: ScheduleOut,
    body: T.Partial(T.Object(Fields, { additionalProperties: false }), { minProperties: 1 }),
    async handler({ deps, principal, params, body }) {
      const cur = await getSchedule(deps, params.id)
      if (body.cron !== undefined || body.timezone !== undefined) checkCron(body.cron ?? cur.cron, body.timezone ?? cur.timezone)
      return updateSchedule(deps, params.id, caller(principal), body)
    },
    audit: { action: 'schedule.update', target: (_, r) => r.name, detail: ({ body }) => (body.enabled === undefined ? null : body.enabled ? 'enabled' : 'disabled') },
  }),
  route({
    method: 'DELETE', path: '/api/schedules/:id', errors: [404], tag: 'templates', summary: 'Delete a schedule (its creator, or `manage template:*`)', access: EXECUTE, params: Id, status: 204,
    handler: async ({ deps, principal, params }) => {
      await deleteSchedule(deps, params.id, caller(principal))
    },
    audit: { action: 'schedule.delete', target: (c) => c.params.id },
  }),
]
