/** Job templates (contract §16): saved commands, private or shared, run with the caller's own permissions (§14). */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { Default, Nullable, OneOf, PlainText } from '../../http/schemas'
import { SaltNotConfigured } from '../../salt/errors'
import { holds, type Grant } from '../roles/service'
import { runTemplate } from './run'
import { TemplateListOut, TemplateOut, TemplateRunOut } from './schema'
import { createTemplate, deleteTemplate, getTemplate, listTemplates, updateTemplate, type TemplateOut as Template } from './service'

/** The target types POST /api/run takes. */
export const TGT_TYPES = ['glob', 'pcre', 'list', 'grain', 'grain_pcre', 'pillar', 'pillar_pcre', 'nodegroup', 'range', 'compound', 'ipcidr'] as const
/** Creating, changing and running a template: a grant of execute of any kind; the handler judges the rest. */
const EXECUTE = { scoped: [{ verb: 'execute', kind: 'salt' }, { verb: 'execute', kind: 'runner' }], doc: '`execute` of any kind; a shared template is changed only by its owner or with `manage template:*`' }
const Id = T.Object({ id: T.String({ format: 'uuid' }) })
const Target = T.String({ minLength: 1, maxLength: 1024 })
const Fields = {
  name: PlainText(1, 128, true),
  description: PlainText(0, 1024),
  tgt: Target,
  tgt_type: OneOf(TGT_TYPES),
  fun: T.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.]+$' }),
  arg: T.Array(T.Unknown(), { maxItems: 100 }),
  kwarg: T.Record(T.String(), T.Unknown()),
  batch: Nullable(T.String({ pattern: '^([1-9][0-9]{0,5}|([1-9][0-9]?|100)%)$', description: 'a count, or a percentage like `10%`; null runs on all at once' })),
  shared: T.Boolean(),
}
/**
 * The template a run request found visible to its caller, by request: the audit entry names it without reading the
 * database again (the audit's target is computed synchronously, also when the run failed).
 */
const runsOf = new WeakMap<object, Template>()
const caller = (p: { userId: string; grants: Grant[] }) => ({ userId: p.userId, manageAll: holds(p.grants, 'manage', 'template:*') })

/** The template routes. */
export const templateRoutes = [
  route({
    method: 'GET', path: '/api/templates', tag: 'templates', summary: 'The templates the caller sees: its own and the shared ones', access: 'login',
    response: TemplateListOut,
    handler: ({ deps, principal }) => listTemplates(deps, principal.userId),
  }),
  route({
    method: 'POST', path: '/api/templates', errors: [409], tag: 'templates', summary: 'Save a command as a template', access: EXECUTE, status: 201, response: TemplateOut,
    body: T.Object({
      name: Fields.name, description: Default(Fields.description, ''), tgt: Fields.tgt, tgt_type: Default(Fields.tgt_type, 'glob'), fun: Fields.fun,
      arg: Default(Fields.arg, []), kwarg: Default(Fields.kwarg, {}), batch: Default(Fields.batch, null), shared: Default(Fields.shared, false),
    }, { additionalProperties: false }),
    handler: ({ deps, principal, body }) => createTemplate(deps, principal.userId, body),
    audit: { action: 'template.create', target: (_, r) => r.name },
  }),
  route({
    method: 'GET', path: '/api/templates/:id', errors: [404], tag: 'templates', summary: 'One template (its own or a shared one)', access: 'login', params: Id, response: TemplateOut,
    handler: ({ deps, principal, params }) => getTemplate(deps, params.id, principal.userId),
  }),
  route({
    method: 'PATCH', path: '/api/templates/:id', errors: [404, 409], tag: 'templates', summary: 'Change a template (its owner, or `manage template:*` for a shared one)', access: EXECUTE, params: Id, response: TemplateOut,
    body: T.Partial(T.Object(Fields, { additionalProperties: false }), { minProperties: 1 }),
    handler: ({ deps, principal, params, body }) => updateTemplate(deps, params.id, caller(principal), body),
    audit: { action: 'template.update', target: (_, r) => r.name },
  }),
  route({
    method: 'DELETE', path: '/api/templates/:id', errors: [404, 409], tag: 'templates', summary: 'Delete a template no schedule uses', access: EXECUTE, params: Id, status: 204,
    handler: async ({ deps, principal, params }) => {
      await deleteTemplate(deps, params.id, caller(principal))
    },
    audit: { action: 'template.delete', target: (c) => c.params.id },
  }),
  route({
    method: 'POST', path: '/api/templates/:id/run', errors: [404, 502, 503], tag: 'templates', status: 202,
    summary: "Run a template, on its target or the one given, with the caller's permissions (as POST /api/run)",
    access: { scoped: [{ verb: 'execute', kind: 'salt' }], doc: '`execute salt:<fun>` on every targeted minion' }, params: Id,
    body: T.Object({ tgt: T.Optional({ ...Target, description: 'a target instead of the template\'s (its type is the template\'s)' }) }, { additionalProperties: false }),
    response: TemplateRunOut,
    async handler(c) {
      const { deps, principal, params, body } = c
      const t = await getTemplate(deps, params.id, principal.userId)
      runsOf.set(c, t)
      if (!deps.salt) throw new SaltNotConfigured()
      return runTemplate(deps, deps.salt.client, principal, t, body.tgt)
    },
    audit: {
      action: 'template.run', failures: true, detail: (_, r) => ('batch_id' in r ? `jid ${r.jid}, batch ${r.batch_id}` : `jid ${r.jid}`),
      // A run refused because the template is not there is audited under its id.
      target: (c) => {
        const t = runsOf.get(c)
        return t ? `${t.name}: ${t.fun} on ${c.body.tgt ?? t.tgt}` : c.params.id
      },
    },
  }),
]
