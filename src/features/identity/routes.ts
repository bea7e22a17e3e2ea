/** The identity API (contract §14): provider settings and their tests, and group → role mappings. */
import { X509Certificate } from 'node:crypto'
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { OneOf, PlainText, UuidPath } from '../../http/schemas'
import { ValidationFailed, valueErrorEntry } from '../../http/errors'
import { allowedDestination } from '../../http/destination'
import { PROVIDERS, REGISTRY, type Provider } from './providers'
import { IdentityOut, MappingListOut, MappingOut, TestOut, patchBody } from './schema'
import { addMapping, changedFields, listMappings, providerConfig, readIdentity, removeMapping, updateProvider } from './service'

const manage = { verb: 'manage', resource: 'setting:*' }

/** Refuses a ca_cert that is not PEM certificates, before it is stored. */
function checkCaCert(pem: string) {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  const bad = () => new ValidationFailed([valueErrorEntry(['body', 'ca_cert'], 'ca_cert must be one or more PEM certificates', '(certificate text)')])
  if (!blocks.length) throw bad()
  for (const b of blocks) {
    try {
      new X509Certificate(b)
    } catch {
      throw bad()
    }
  }
}

/** Checks the destination of a provider's settings before they are stored (refused addresses are 422). */
async function checkPatch(p: Provider, b: Record<string, unknown>, allow: string | null) {
  if (p === 'ldap' && typeof b.url === 'string') await allowedDestination(new URL(b.url).hostname.replace(/^\[|\]$/g, ''), allow, ['body', 'url'], b.url)
  if (p === 'ldap' && typeof b.ca_cert === 'string' && b.ca_cert !== '') checkCaCert(b.ca_cert)
  if (p === 'oidc' && typeof b.issuer === 'string') await allowedDestination(new URL(b.issuer).hostname, allow, ['body', 'issuer'], b.issuer)
}

const put = (p: Provider) =>
  route({
    method: 'PUT', path: `/api/admin/identity/${p}`, tag: 'identity', summary: `Change the ${REGISTRY[p].label} sign-in settings (absent or null fields stay)`, access: manage,
    body: patchBody(REGISTRY[p].fields), response: IdentityOut,
    async handler({ deps, body }) {
      const b = body as Record<string, unknown>
      await checkPatch(p, b, deps.config.outboundAllow)
      return updateProvider(deps, p, b)
    },
    // Field names only: a secret's value never reaches the audit log.
    audit: { action: `identity.${p}`, target: () => p, detail: ({ body }) => `changed: ${changedFields(body as Record<string, unknown>).join(', ') || 'nothing'}` },
  })

const test = (p: Provider) =>
  route({
    method: 'POST', path: `/api/admin/identity/${p}/test`, tag: 'identity', summary: `Try the stored ${REGISTRY[p].label} settings without signing anyone in`, access: manage, response: TestOut,
    handler: async ({ deps }) => REGISTRY[p].test(deps, await providerConfig(deps, p)),
    audit: { action: `identity.${p}.test`, target: () => p, detail: (_, r) => (r.ok ? 'ok' : 'failed') },
  })

export const identityRoutes = [
  route({ method: 'GET', path: '/api/admin/identity', tag: 'identity', summary: 'Read the sign-in providers\' settings (secrets only as *_set)', access: manage, response: IdentityOut, handler: ({ deps }) => readIdentity(deps) }),
  ...PROVIDERS.map(put),
  ...PROVIDERS.map(test),
  route({
    method: 'GET', path: '/api/admin/identity/mappings', tag: 'identity', summary: 'List the group → role mappings', access: manage,
    response: MappingListOut, handler: ({ deps }) => listMappings(deps),
  }),
  route({
    method: 'POST', path: '/api/admin/identity/mappings', errors: [409], tag: 'identity', summary: 'Map a directory group (a name or a DN) to a role', access: manage, status: 201,
    body: T.Object({ provider: OneOf(PROVIDERS), group: PlainText(1, 1024, true), role_id: T.String({ format: 'uuid' }) }, { additionalProperties: false }),
    response: MappingOut,
    handler: ({ deps, body }) => addMapping(deps, body.provider, body.group, body.role_id),
    audit: { action: 'identity.mapping.create', target: (_, m) => `${m.provider}:${m.group}`, detail: (_, m) => `role: ${m.role_name}` },
  }),
  route({
    method: 'DELETE', path: '/api/admin/identity/mappings/:mapping_id', errors: [404], tag: 'identity', summary: 'Delete a group → role mapping', access: manage, status: 204,
    params: UuidPath('mapping_id'),
    handler: ({ deps, params }) => removeMapping(deps, params.mapping_id),
    audit: { action: 'identity.mapping.delete', target: (_, m) => `${m.provider}:${m.group}`, detail: (_, m) => `role: ${m.role_name}` },
  }),
]
