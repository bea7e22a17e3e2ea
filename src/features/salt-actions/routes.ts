/** Everything done through salt-api: connection test, pollers, key actions, commands, job kill, inventory refresh. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import type { AppDeps, SaltSide } from '../../deps'
import { Default, OneOf } from '../../http/schemas'
import { SaltNotConfigured } from '../../salt/errors'
import { allowedUrl } from '../../http/destination'
import { Forbidden } from '../../lib/errors'
import { saltCredentials } from '../settings/service'
import { SALT_FIELDS } from '../settings/schema'
import { jobInitiator, jobTarget, markJob, markKilled } from '../jobs/service'
import { holds } from '../roles/service'
import { runForUser, runScope, sendKill } from './run'
import { runRunnerForUser } from './runner'
import { ValidationFailed, valueErrorEntry } from '../../http/errors'
import { previewForUser } from './preview'
import { startBatch } from '../batches/service'
import { newJid } from '../../lib/salt-time'
import { keyAction } from './service'
import { testConnection } from './connection-test'
import { KillOut, PollerRunOut, PollersOut, RunOut, RunPreviewOut, RunScopeOut, SaltTestOut } from './schema'
import { RefreshStartedOut } from '../inventory/schema'

const edit = { verb: 'edit', resource: 'settings:*' }

/** The salt side of a running service; SaltNotConfigured when salt is not wired (CLI, core tests). */
function salt(deps: AppDeps): SaltSide {
  if (!deps.salt) throw new SaltNotConfigured()
  return deps.salt
}

/** The target types salt's matching takes (as POST /api/run takes them). */
const TgtType = Default(OneOf(['glob', 'pcre', 'list', 'grain', 'grain_pcre', 'pillar', 'pillar_pcre', 'nodegroup', 'range', 'compound', 'ipcidr']), 'glob')
/** A target: an expression, or a list of minion ids for tgt_type list. */
const Tgt = T.Union([T.String({ minLength: 1, maxLength: 1024 }), T.Array(T.String({ minLength: 1, maxLength: 255 }), { maxItems: 10000 })])
/** A salt function name. */
const Fun = T.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.]+$' })

/** The audit detail's note of the salt sources a job or kill left out (contract §15 "Several masters"); '' when none. */
const skippedNote = (skipped: { source: string; reason: string }[]) => (skipped.length ? `; skipped ${skipped.map((s) => `${s.source} (${s.reason})`).join(', ')}` : '')

const KeyPath = T.Object({ minion_id: T.String({ minLength: 1, maxLength: 255 }) })

/** A key action route: the grant checked on the concrete key (`<act> key:<minion id>`), the wheel call, then the change recorded with the acting user. */
const keyRoute = (method: 'POST' | 'DELETE', path: string, act: 'accept' | 'reject' | 'delete', summary: string) =>
  route({
    method, path, tag: 'keys', summary, params: KeyPath, status: 204, errors: [404, 502, 503],
    access: { scoped: [{ verb: act, kind: 'key' }], doc: `\`${act} key:<minion id>\`` },
    handler({ deps, params, principal }) {
      if (!holds(principal.grants, act, `key:${params.minion_id}`)) throw new Forbidden()
      return keyAction(deps, salt(deps).client, principal.username, params.minion_id, act)
    },
    audit: { action: `key.${act}`, failures: true, target: (c) => c.params.minion_id },
  })

/** The salt action routes; `pollerNames` are the scheduler's pollers (a path naming another one is a 422). */
export const saltRoutes = (pollerNames: readonly string[]) => [
  route({
    method: 'POST', path: '/api/admin/settings/test-salt', tag: 'settings', summary: 'Test a salt-api connection before saving it', access: edit, response: SaltTestOut,
    // The same field schemas as the stored salt settings, all required here.
    body: T.Object({
      url: SALT_FIELDS.url[0], username: SALT_FIELDS.username[0], password: SALT_FIELDS.password[0], verify: SALT_FIELDS.verify[0], eauth: SALT_FIELDS.eauth[0],
    }, { additionalProperties: false }),
    async handler({ deps, body }) {
      await allowedUrl(body.url, deps.config.outboundAllow, ['body', 'url'])
      return testConnection(body, deps.config.outboundAllow)
    },
  }),
  route({
    method: 'POST', path: '/api/admin/settings/test-salt-saved', tag: 'settings', summary: 'Test the saved salt-api connection', access: edit, response: SaltTestOut,
    handler({ deps }) {
      const c = saltCredentials(deps)
      if (!c.url || !c.username || !c.password) return { ok: false, detail: 'Salt API not configured', minion_count: null }
      return testConnection(c, deps.config.outboundAllow)
    },
  }),
  route({
    method: 'GET', path: '/api/admin/pollers', errors: [503], tag: 'pollers', summary: 'Status of every poller and of the event stream', access: edit, response: PollersOut,
    handler: ({ deps }) => {
      const rt = salt(deps)
      return { pollers: rt.pollers.status(), event_stream: rt.stream.status() }
    },
  }),
  route({
    method: 'POST', path: '/api/admin/pollers/:name/run', errors: [409, 503], tag: 'pollers', summary: 'Run a poller now (503 while the salt-master does not answer, for a poller that asks it)', access: edit, status: 202, response: PollerRunOut,
    params: T.Object({ name: OneOf(pollerNames) }),
    handler({ deps, params }) {
      void salt(deps).pollers.runNow(params.name)
      return { name: params.name, started: true }
    },
    audit: { action: 'poller.run', target: (c) => c.params.name },
  }),
  keyRoute('POST', '/api/keys/:minion_id/accept', 'accept', 'Accept a minion key'),
  keyRoute('POST', '/api/keys/:minion_id/reject', 'reject', 'Reject a minion key'),
  keyRoute('DELETE', '/api/keys/:minion_id', 'delete', 'Delete a minion key'),
  route({
    method: 'GET', path: '/api/run/scope', tag: 'jobs', summary: 'What the caller may run: its execute grants with the minions each is scoped to', access: 'login',
    response: RunScopeOut,
    handler: ({ deps, principal }) => runScope(deps, principal.userId),
  }),
  route({
    method: 'POST', path: '/api/run/preview', errors: [502, 503], tag: 'jobs',
    summary: "The minions salt matches for a target (the first 1,000), those the caller's grants do not cover, and whether fun is allowed; nothing runs",
    // Any execute (contract §16): a runner-only holder previews too, and sees every matched minion outside its scope.
    access: { scoped: [{ verb: 'execute', kind: 'salt' }, { verb: 'execute', kind: 'runner' }], doc: 'any `execute` grant (`salt:…` or `runner:…`)' },
    body: T.Object({ tgt: Tgt, tgt_type: TgtType, fun: T.Optional(Fun) }, { additionalProperties: false }),
    response: RunPreviewOut,
    handler: ({ deps, body, principal }) => previewForUser(deps, salt(deps).client, principal.userId, body),
  }),
  route({
    method: 'POST', path: '/api/run', errors: [404, 502, 503], tag: 'jobs', status: 202, response: RunOut,
    summary: "Run a command through local_async on the minions salt matches for the target, each checked against the caller's grants; or a runner (`client: runner`)",
    access: { scoped: [{ verb: 'execute', kind: 'salt' }, { verb: 'execute', kind: 'runner' }], doc: '`execute salt:<fun>` on every targeted minion; `execute runner:<fun>` for a runner' },
    body: T.Object({
      client: Default(T.Union([T.Literal('local'), T.Literal('runner')], { description: '`runner` runs a runner on the master (`state.orchestrate` …), with no target' }), 'local'),
      tgt: T.Optional(T.Union([T.String({ minLength: 1, maxLength: 1024 }), T.Array(T.String({ minLength: 1, maxLength: 255 }), { maxItems: 10000 })], { description: 'Required for `client: local`; a runner takes none' })),
      tgt_type: Default(OneOf(['glob', 'pcre', 'list', 'grain', 'grain_pcre', 'pillar', 'pillar_pcre', 'nodegroup', 'range', 'compound', 'ipcidr']), 'glob'),
      fun: T.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.]+$' }),
      arg: Default(T.Array(T.Unknown(), { maxItems: 100 }), []),
      kwarg: Default(T.Record(T.String(), T.Unknown()), {}),
      // Batches (contract §16): the checked minions published in slices of `batch` (a count or a percentage).
      batch: T.Optional(T.Union([T.Integer({ minimum: 1, maximum: 10000 }), T.String({ pattern: '^(100|[1-9][0-9]?)%$' })])),
      batch_wait: T.Optional(T.Integer({ minimum: 0, maximum: 3600 })),
      batch_stop_on_failure: T.Optional(T.Boolean()),
    }, { additionalProperties: false }),
    handler({ deps, body, rawBody, principal }) {
      const { client, tgt, batch, batch_wait, batch_stop_on_failure, ...rest } = body
      if (client === 'runner') {
        if (tgt !== undefined) throw new ValidationFailed([valueErrorEntry(['body', 'tgt'], 'a runner runs on the master and takes no target', tgt)])
        if (batch !== undefined) throw new ValidationFailed([valueErrorEntry(['body', 'batch'], 'a runner runs on the master and takes no batch', batch)])
        return runRunnerForUser(deps, salt(deps).client, principal, rest)
      }
      if (tgt === undefined) throw new ValidationFailed([{ type: 'missing', loc: ['body', 'tgt'], msg: 'Field required', input: rawBody }])
      const req = { ...rest, tgt }
      if (batch === undefined) return runForUser(deps, salt(deps).client, principal, req)
      return startBatch(deps, salt(deps).client, principal, req, { batch, batch_wait: batch_wait ?? 0, batch_stop_on_failure: batch_stop_on_failure ?? false })
    },
    audit: {
      // A batch is audited once, with its id; its later slices are not separate acts.
      action: 'job.run', failures: true, detail: (_, r) => ('batch_id' in r ? `jid ${r.jid}, batch ${r.batch_id}` : `jid ${r.jid}`) + skippedNote(r.skipped_sources),
      target: ({ body }) => body.client === 'runner' ? `runner ${body.fun}` : `${body.fun} on ${Array.isArray(body.tgt) ? body.tgt.join(',') : body.tgt}`,
    },
  }),
  route({
    method: 'POST', path: '/api/jobs/:jid/kill', errors: [404, 502, 503], tag: 'jobs', summary: 'Kill a running job on its minions', status: 202, response: KillOut,
    access: { scoped: [{ verb: 'kill', kind: 'job' }, { verb: 'execute', kind: 'salt' }], doc: '`kill job:*`, or the jobs the caller started' },
    params: T.Object({ jid: T.String({ minLength: 1, maxLength: 64, pattern: '^[0-9_]+$' }) }),
    async handler({ deps, params, principal }) {
      const job = await jobTarget(deps, params.jid)
      // Without kill job:* a user may kill only the jobs it started itself (contract §14).
      if (!holds(principal.grants, 'kill', `job:${params.jid}`) && (await jobInitiator(deps, params.jid)) !== principal.username) throw new Forbidden()
      const jid = newJid(deps.clock.now())
      await markJob(deps, jid, { initiator: principal.username })
      // Through the salt source the job ran through (contract §15 "Several masters"), not default's.
      const r = await sendKill(deps, salt(deps).client, params.jid, job, jid)
      await markKilled(deps, params.jid, principal.username)
      return { jid: params.jid, ...r }
    },
    // A kill salt refuses is audited too, as key actions and runs are: the attempt is the operator's act.
    audit: { action: 'job.kill', failures: true, target: (c) => c.params.jid, detail: (_, r) => skippedNote(r.skipped_sources).slice(2) || null },
  }),
  route({
    method: 'POST', path: '/api/inventory/refresh', errors: [409, 503], tag: 'inventory', summary: 'Collect package inventory now', access: { verb: 'collect', resource: 'inventory:*' }, status: 202, response: RefreshStartedOut,
    body: T.Object({ target: Default(T.String({ minLength: 1, maxLength: 1024 }), '*'), target_type: Default(OneOf(['glob']), 'glob') }, { additionalProperties: false }),
    handler: ({ deps, body }) => salt(deps).refreshInventory(body.target),
    audit: { action: 'inventory.refresh', target: (c) => c.body.target },
  }),
]
