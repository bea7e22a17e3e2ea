/** The settings API (interface.md and contract §5). */
import { route } from '../../http/route'
import { valueError } from '../../http/errors'
import { audit } from '../audit/service'
import { LOGGING_FIELDS, POLLER_FIELDS, SALT_FIELDS, SettingsOut, WIDGET_FIELDS, WidgetOut, patchBody, type Section } from './schema'
import { readSection, readSettings, settingsStatus, updateSection } from './service'
import { Type as T } from '@sinclair/typebox'

const edit = { verb: 'edit', resource: 'settings:*' }

const put = (section: Section, fields: Parameters<typeof patchBody>[0], summary: string) =>
  route({
    method: 'PUT', path: `/api/admin/settings/${section}`, tag: 'settings', summary, access: edit, body: patchBody(fields), response: SettingsOut,
    handler({ deps, body, principal, client }) {
      const b = body as Record<string, unknown>
      if (section === 'salt' && !Object.values(b).some((v) => v !== null && v !== undefined))
        throw valueError('at least one salt field must be provided', b)
      const out = updateSection(deps, section, b)
      const changed = Object.keys(b).filter((k) => b[k] !== null && b[k] !== undefined)
      audit(deps, { username: principal!.username, action: `settings.${section}`, target: section, detail: changed.length ? `changed: ${changed.join(', ')}` : 'no change', client })
      return out
    },
  })

export const settingsRoutes = [
  route({ method: 'GET', path: '/api/admin/settings', tag: 'settings', summary: 'Read every setting', access: edit, response: SettingsOut, handler: ({ deps }) => readSettings(deps) }),
  put('salt', SALT_FIELDS, 'Change the salt-api connection'),
  put('pollers', POLLER_FIELDS, 'Change the pollers'),
  put('widget', WIDGET_FIELDS, 'Change the overview widget'),
  put('logging', LOGGING_FIELDS, 'Change the log format'),
  route({
    method: 'GET', path: '/api/admin/settings/status', tag: 'settings', summary: 'Whether the salt connection is configured', access: edit,
    response: T.Object({ configured: T.Boolean(), missing: T.Array(T.String()) }), handler: ({ deps }) => settingsStatus(deps),
  }),
  route({ method: 'GET', path: '/api/activity/widget-config', tag: 'activity', summary: 'The widget settings', access: 'login', response: WidgetOut, handler: ({ deps }) => readSection(deps, 'widget') }),
]
