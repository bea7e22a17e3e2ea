/** Everything done through salt-api: connection test, pollers, key actions, commands, job kill, inventory refresh. */
import { Type as T } from '@sinclair/typebox'
import { route } from '../../http/route'
import { AppError } from '../../http/errors'
import type { AppDeps, SaltSide } from '../../deps'
import { OneOf } from '../../http/schemas'
import { audit } from '../audit/service'
import { SaltClient, type SaltCreds } from '../../salt/client'
import { SaltNotConfigured, errorText, isSaltError } from '../../salt/errors'
import { noFacts } from '../../salt/facts'
import { NotFound } from '../../lib/errors'
import { saltCredentials } from '../settings/service'
import { SALT_FIELDS } from '../settings/schema'
import { jobMinions } from '../jobs/service'
import { applyFacts } from '../ingest/apply'

const edit = { verb: 'edit', resource: 'settings:*' }

/** The salt side of a running service; SaltNotConfigured when salt is not wired (CLI, core tests). */
function salt(deps: AppDeps): SaltSide {
  if (!deps.salt) throw new SaltNotConfigured()
  return deps.salt
}

/**
 * Tries a login and a cheap call with the given connection: the answer says how it went.
 * Retries a 5xx twice, quickly: salt-api 3006 answers concurrent requests with a 500 now and then (its threads race on
 * the master's `.root_key` file), and a button that says "failed" on a healthy master would mislead the operator.
 */
async function testConnection(creds: SaltCreds) {
  const c = new SaltClient(() => creds, { attempts: 3, backoffMs: 250, timeoutMs: 5_000 })
  try {
    await c.login()
    const keys = (await c.wheel('key.list_all')) as { minions?: unknown[] }
    const n = Array.isArray(keys?.minions) ? keys.minions.length : 0
    return { ok: true, detail: `Connected to salt-api as ${creds.username}; ${n} accepted minion${n === 1 ? '' : 's'}.`, minion_count: n }
  } catch (e) {
    return { ok: false, detail: isSaltError(e) ? errorText(e) : `Salt API error: ${errorText(e)}`, minion_count: null }
  }
}

const TestOut = T.Object({ ok: T.Boolean(), detail: T.String(), minion_count: T.Union([T.Integer(), T.Null()]) })
const KeyPath = T.Object({ minion_id: T.String({ minLength: 1, maxLength: 255 }) })

/** Runs a wheel key action and records the change with the acting user. */
async function keyAction(deps: AppDeps, who: string, client: string, id: string, act: 'accept' | 'reject' | 'delete') {
  const rt = salt(deps)
  const include = act === 'accept' ? { include_rejected: true, include_denied: true } : act === 'reject' ? { include_accepted: true, include_denied: true } : {}
  const r = (await rt.client.wheel(`key.${act}`, { match: id, ...include })) as Record<string, unknown>
  const matched = r && typeof r === 'object' && Object.values(r).some((v) => Array.isArray(v) && v.includes(id))
  audit(deps, { username: who, action: `key.${act}`, target: id, ok: matched, detail: matched ? null : 'no such key', client })
  if (!matched) throw new NotFound('Key')
  applyFacts(deps, [{ ...noFacts(), keys: [{ minionId: id, act, ts: deps.clock.now() }] }], who)
}

export const saltRoutes = [
  route({
    method: 'POST', path: '/api/admin/settings/test-salt', tag: 'settings', summary: 'Test a salt-api connection before saving it', access: edit, response: TestOut,
    // The same field schemas as the stored salt settings, all required here.
    body: T.Object({
      url: SALT_FIELDS.url[0], username: SALT_FIELDS.username[0], password: SALT_FIELDS.password[0], verify: SALT_FIELDS.verify[0], eauth: SALT_FIELDS.eauth[0],
    }, { additionalProperties: false }),
    handler: ({ body }) => testConnection(body),
  }),
  route({
    method: 'POST', path: '/api/admin/settings/test-salt-saved', tag: 'settings', summary: 'Test the saved salt-api connection', access: edit, response: TestOut,
    handler({ deps }) {
      const c = saltCredentials(deps)
      if (!c.url || !c.username || !c.password) return { ok: false, detail: 'Salt API not configured', minion_count: null }
      return testConnection(c)
    },
  }),
  route({
    method: 'GET', path: '/api/admin/pollers', tag: 'pollers', summary: 'Status of every poller and of the event stream', access: edit,
    handler: ({ deps }) => {
      const rt = salt(deps)
      return { pollers: rt.pollers.status(), event_stream: rt.stream.status() }
    },
  }),
  route({
    method: 'POST', path: '/api/admin/pollers/:name/run', tag: 'pollers', summary: 'Run a poller now', access: edit, status: 202,
    params: T.Object({ name: OneOf(['keys', 'presence', 'grains', 'jobs', 'fleet', 'inventory', 'retention']) }),
    handler({ deps, params, principal, client }) {
      void salt(deps).pollers.runNow(params.name)
      audit(deps, { username: principal!.username, action: 'poller.run', target: params.name, client })
      return { name: params.name, started: true }
    },
  }),
  route({
    method: 'POST', path: '/api/keys/:minion_id/accept', tag: 'keys', summary: 'Accept a minion key', access: { verb: 'accept', resource: 'key:*' }, params: KeyPath, status: 204,
    handler: ({ deps, params, principal, client }) => keyAction(deps, principal!.username, client, params.minion_id, 'accept'),
  }),
  route({
    method: 'POST', path: '/api/keys/:minion_id/reject', tag: 'keys', summary: 'Reject a minion key', access: { verb: 'reject', resource: 'key:*' }, params: KeyPath, status: 204,
    handler: ({ deps, params, principal, client }) => keyAction(deps, principal!.username, client, params.minion_id, 'reject'),
  }),
  route({
    method: 'DELETE', path: '/api/keys/:minion_id', tag: 'keys', summary: 'Delete a minion key', access: { verb: 'delete', resource: 'key:*' }, params: KeyPath, status: 204,
    handler: ({ deps, params, principal, client }) => keyAction(deps, principal!.username, client, params.minion_id, 'delete'),
  }),
  route({
    method: 'POST', path: '/api/run', tag: 'jobs', summary: 'Run a command through local_async', access: { verb: 'execute', resource: 'salt:*' }, status: 202,
    body: T.Object({
      tgt: T.Union([T.String({ minLength: 1, maxLength: 1024 }), T.Array(T.String({ minLength: 1, maxLength: 255 }), { maxItems: 10000 })]),
      tgt_type: T.Optional(OneOf(['glob', 'pcre', 'list', 'grain', 'grain_pcre', 'pillar', 'pillar_pcre', 'nodegroup', 'range', 'compound', 'ipcidr'])),
      fun: T.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.]+$' }),
      arg: T.Optional(T.Array(T.Unknown(), { maxItems: 100 })),
      kwarg: T.Optional(T.Record(T.String(), T.Unknown())),
    }, { additionalProperties: false }),
    async handler({ deps, body, principal, client }) {
      const r = await salt(deps).client.localAsync(body.tgt, body.fun, { tgt_type: body.tgt_type ?? 'glob', arg: body.arg ?? [], kwarg: body.kwarg ?? {} })
      const target = Array.isArray(body.tgt) ? body.tgt.join(',') : body.tgt
      audit(deps, { username: principal!.username, action: 'job.run', target: `${body.fun} on ${target}`, ok: !!r?.jid, detail: r?.jid ? `jid ${r.jid}` : 'no minions matched', client })
      if (!r?.jid) throw new AppError(404, 'No minions matched the target')
      return { jid: String(r.jid), minions: r.minions ?? [] }
    },
  }),
  route({
    method: 'POST', path: '/api/jobs/:jid/kill', tag: 'jobs', summary: 'Kill a running job on its minions', access: { verb: 'kill', resource: 'job:*' }, status: 202,
    params: T.Object({ jid: T.String({ minLength: 1, maxLength: 64, pattern: '^[0-9_]+$' }) }),
    async handler({ deps, params, principal, client }) {
      const minions = jobMinions(deps, params.jid)
      const r = await salt(deps).client.localAsync(minions.length ? minions : '*', 'saltutil.kill_job', { arg: [params.jid], tgt_type: minions.length ? 'list' : 'glob' })
      audit(deps, { username: principal!.username, action: 'job.kill', target: params.jid, client })
      return { jid: params.jid, kill_jid: r?.jid ? String(r.jid) : null, minions: r?.minions ?? [] }
    },
  }),
  route({
    method: 'POST', path: '/api/inventory/refresh', tag: 'inventory', summary: 'Collect package inventory now', access: { verb: 'collect', resource: 'inventory:*' }, status: 202,
    body: T.Object({ target: T.Optional(T.String({ minLength: 1, maxLength: 1024 })), target_type: T.Optional(OneOf(['glob'])) }, { additionalProperties: false }),
    handler({ deps, body, principal, client }) {
      const r = salt(deps).refreshInventory(body.target ?? '*')
      audit(deps, { username: principal!.username, action: 'inventory.refresh', target: body.target ?? '*', client })
      return { refresh_id: r.refresh_id, started_at: r.started_at }
    },
  }),
]
