/** The settings API (interface.md and contract §5). */
import type { AppDeps } from '../../deps'
import { route } from '../../http/route'
import { valueError } from '../../http/errors'
import { allowedUrl } from '../../http/destination'
import { LOGGING_FIELDS, POLLER_FIELDS, SALT_FIELDS, SettingsOut, SettingsStatusOut, WIDGET_FIELDS, WidgetOut, patchBody, type Section } from './schema'
import { readSection, readSettings, settingsStatus, updateSection } from './service'

const edit = { verb: 'edit', resource: 'settings:*' }

/** The fields a partial update sets (absent and null leave a field alone). */
export const changedFields = (b: Record<string, unknown>) => Object.keys(b).filter((k) => b[k] !== null && b[k] !== undefined)

/** The salt section's own rules on a partial update (also a salt source's): at least one field, and a URL Saltdeck may call. */
export async function checkSaltPatch(deps: AppDeps, b: Record<string, unknown>) {
  if (!changedFields(b).length) throw valueError('at least one salt field must be provided', b)
  if (typeof b.url === 'string') await allowedUrl(b.url, deps.config.outboundAllow, ['body', 'url'])
}

const put = (section: Section, fields: Parameters<typeof patchBody>[0], summary: string) =>
  route({
    method: 'PUT', path: `/api/admin/settings/${section}`, tag: 'settings', summary, access: edit, body: patchBody(fields), response: SettingsOut,
    async handler({ deps, body }) {
      const b = body as Record<string, unknown>
      if (section === 'salt') await checkSaltPatch(deps, b)
      return updateSection(deps, section, b)
    },
    audit: {
      action: `settings.${section}`, target: () => section,
      detail: ({ body }) => {
        const changed = changedFields(body as Record<string, unknown>)
        return changed.length ? `changed: ${changed.join(', ')}` : 'no change'
      },
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
    response: SettingsStatusOut, handler: ({ deps }) => settingsStatus(deps),
  }),
  route({ method: 'GET', path: '/api/activity/widget-config', tag: 'activity', summary: 'The widget settings', access: 'login', response: WidgetOut, handler: ({ deps }) => readSection(deps, 'widget') }),
]
