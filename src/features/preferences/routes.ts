/** The signed-in user's own display preferences: read and change them (any user, for themselves only). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { readPreferences, TIME_ZONES, writePreferences } from './service'

const Preferences = T.Object({
  time_zone: T.Union(TIME_ZONES.map((z) => T.Literal(z)), { description: '`local`: the browser\'s time zone; `utc`: UTC' }),
})

/** GET and PUT /api/auth/me/preferences. */
export const preferenceRoutes = [
  route({
    method: 'GET', path: '/api/auth/me/preferences', tag: 'auth', summary: 'Your display preferences (the time zone of the dashboard)', access: 'login', response: Preferences,
    handler: ({ deps, principal }) => readPreferences(deps, principal.userId),
  }),
  route({
    method: 'PUT', path: '/api/auth/me/preferences', tag: 'auth', summary: 'Change your display preferences', access: 'login', response: Preferences,
    body: T.Object({ time_zone: Preferences.properties.time_zone }, { additionalProperties: false }),
    handler: ({ deps, principal, body }) => writePreferences(deps, principal.userId, body),
  }),
]
