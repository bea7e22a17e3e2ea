/** The salt sources API (contract §15 "Several masters"): list, add, read, change and delete the salt-apis Saltdeck reads. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { patchBody, SALT_FIELDS } from '../settings/schema'
import { changedFields, checkSaltPatch } from '../settings/routes'
import { SaltSourceListOut, SaltSourceOut, SourceName } from './schema'
import { createSource, deleteSource, getSource, listSources, updateSource } from './service'

/** The salt section's own permission: a source holds the same secrets and reaches the same kind of master. */
const edit = { verb: 'edit', resource: 'settings:*' }
const Name = T.Object({ name: SourceName })
const Patch = patchBody(SALT_FIELDS)
/** A new source: its name and URL, the other fields of the salt section optional (null or absent: their default). */
const Create = T.Object({ name: SourceName, ...Patch.properties, url: SALT_FIELDS.url[0] }, { additionalProperties: false })
/** The audit detail: the fields a body set, by name (never a value: the password is one of them). */
const changed = (b: unknown) => {
  const c = changedFields(b as Record<string, unknown>)
  return c.length ? `changed: ${c.join(', ')}` : 'no change'
}

/** The salt source routes. */
export const saltSourceRoutes = [
  route({
    method: 'GET', path: '/api/admin/salt-sources', tag: 'salt-sources', summary: 'Every salt source, `default` (the salt settings section) first', access: edit,
    response: SaltSourceListOut, handler: ({ deps }) => listSources(deps),
  }),
  route({
    method: 'POST', path: '/api/admin/salt-sources', errors: [409], tag: 'salt-sources', summary: 'Add a salt source (another salt-api)', access: edit,
    status: 201, body: Create, response: SaltSourceOut,
    async handler({ deps, body }) {
      const { name, ...fields } = body as Record<string, unknown> & { name: string }
      await checkSaltPatch(deps, fields)
      return createSource(deps, name, fields)
    },
    audit: { action: 'salt_source.create', target: (c) => c.body.name, detail: ({ body }) => { const { name: _, ...f } = body; return changed(f) } },
  }),
  route({
    method: 'GET', path: '/api/admin/salt-sources/:name', errors: [404], tag: 'salt-sources', summary: 'One salt source', access: edit, params: Name,
    response: SaltSourceOut, handler: ({ deps, params }) => getSource(deps, params.name),
  }),
  route({
    method: 'PUT', path: '/api/admin/salt-sources/:name', errors: [404], tag: 'salt-sources', access: edit, params: Name, body: Patch, response: SaltSourceOut,
    summary: 'Change a salt source (a partial update, as PUT /api/admin/settings/salt; `default` is that section)',
    async handler({ deps, params, body }) {
      await checkSaltPatch(deps, body as Record<string, unknown>)
      return updateSource(deps, params.name, body as Record<string, unknown>)
    },
    audit: { action: 'salt_source.update', target: (c) => c.params.name, detail: ({ body }) => changed(body) },
  }),
  route({
    method: 'DELETE', path: '/api/admin/salt-sources/:name', errors: [404, 409], tag: 'salt-sources', summary: 'Delete a salt source (not `default`)', access: edit,
    params: Name, status: 204,
    handler: async ({ deps, params }) => {
      await deleteSource(deps, params.name)
    },
    audit: { action: 'salt_source.delete', target: (c) => c.params.name },
  }),
]
