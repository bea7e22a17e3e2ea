/** The activity list (interface.md GET /api/activity, contract §6). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, paging } from '../../http/schemas'
import { listEvents } from './service'
import { activityStream } from './stream'
import { EventListOut } from './schema'

/** Filters shared by the list and the stream. */
export const activityFilters = {
  since_minutes: T.Optional(T.Integer({ minimum: 1, maximum: 10080 })),
  category: T.Optional(T.String({ maxLength: 64 })),
  categories: T.Optional(T.String({ maxLength: 200 })),
  event_type: T.Optional(T.String({ maxLength: 64 })),
  minion_id: T.Optional(T.String({ maxLength: 255 })),
  minion: T.Optional(T.String({ maxLength: 255, description: 'Part of the minion id: a case-sensitive substring (a prefix is one too); `minion_id` is the exact match' })),
  jid: T.Optional(T.String({ maxLength: 64 })),
  search: T.Optional(T.String({ maxLength: 200 })),
  hide_dispatch: Default(T.Boolean(), false),
  hide_routine: Default(T.Boolean(), false),
  source: T.Optional(T.String({ maxLength: 64, description: 'Only events that came through this salt source (an unknown one matches nothing)' })),
  success: T.Optional(T.Boolean({ description: 'Only events that succeeded (true) or failed (false); events with no outcome (job.new, keys, presence) match neither' })),
}

export const activityRoutes = [
  route({
    method: 'GET', path: '/api/activity', tag: 'activity', summary: 'List activity events, newest first', access: 'login',
    query: T.Object({ ...activityFilters, ...paging(500, 100) }),
    response: EventListOut,
    handler: ({ deps, query, principal }) => listEvents(deps, query, principal.grants, query.limit, query.offset),
  }),
  route({
    method: 'GET', path: '/api/activity/stream', tag: 'activity', summary: 'Server-Sent Events of new activity (replays after Last-Event-ID or after_id)', access: 'login',
    query: T.Object({ ...activityFilters, after_id: T.Optional(T.Integer({ minimum: 0 })) }),
    handler({ deps, query, principal, request }) {
      const header = request.headers.get('last-event-id')
      const fromHeader = header && /^\d+$/.test(header) ? Number(header) : null
      return activityStream(deps, query, principal.grants, fromHeader ?? query.after_id ?? null, { sessionId: principal.sessionId })
    },
  }),
]
