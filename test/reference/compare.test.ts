// Proves Saltdeck's 422 bodies are what FastAPI + pydantic v2 answer for the same models (contract §1.1: pydantic is
// the reference): generated bad requests go to Saltdeck (app.handle, as admin) and to test/reference/app.py, and every
// request that either side refuses with 422 must get the same status and body from both. Exceptions, as the contract
// allows: password inputs are never echoed by Saltdeck, and no integer above 2^53 is generated (JavaScript cannot hold it).
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { call, testWorld } from '../helpers/app'
import { missingTool } from '../helpers/tools'

const ROOT = join(import.meta.dir, '../..')
const PY = join(ROOT, '.cache/ref-venv/bin/python')
const missing = missingTool(PY, 'bun run test:reference installs it', 'the pydantic reference comparison')

/** One request of the comparison. */
interface Req {
  method: string
  path: string
  body?: unknown
  raw?: string
}

type Field = { name: string; kind: 'int'; min: number; max: number } | { name: string; kind: 'str'; min: number; max: number } | { name: string; kind: 'bool' }

/** Values of the wrong shape or out of bounds for a body field. */
function badValues(f: Field): unknown[] {
  const common: unknown[] = [[1], { a: 1 }]
  if (f.kind === 'int') return [...common, f.min - 1, f.max + 1, String(f.max + 1), 'abc', '', 1.5, `${f.min}.0`, ' 7 ', '5_0', true, false, null]
  if (f.kind === 'bool') return [...common, 'maybe', 2, '', 'yes', 0, null]
  return [...common, 5, true, 'a'.repeat(f.max + 1), ...(f.min > 0 ? [''] : []), '   ', 'a\u0001b', 'a\u007fb', 'a\u0085b', 'tab\there']
}

/** Bad bodies for a route: absent, not an object, unknown property, a missing required field, each field's bad values. */
function bodies(method: string, path: string, valid: Record<string, unknown>, fields: Field[], required: string[]): Req[] {
  const out: Req[] = [{ method, path }, { method, path, body: [1] }, { method, path, body: 'text' }, { method, path, body: null }, { method, path, body: { ...valid, extra: 1 } }]
  for (const r of required) {
    const { [r]: _, ...rest } = valid
    out.push({ method, path, body: rest })
  }
  for (const f of fields) for (const v of badValues(f)) out.push({ method, path, body: { ...valid, [f.name]: v } })
  out.push({ method, path, raw: '{"a": 1,}' }, { method, path, raw: '{"a"' })
  return out
}

/** Bad query strings for integer, enum and string parameters (a string one length over its maximum, and far over it). */
function queries(path: string, ints: { name: string; min: number; max: number | null }[], enums: { name: string }[] = [], strs: { name: string; max: number }[] = []): Req[] {
  const out: Req[] = []
  for (const q of ints) {
    const vals = [String(q.min - 1), 'abc', '1.5', '', '1e3', 'true', '5__0', ...(q.max === null ? [] : [String(q.max + 1), `${q.max + 1}.0`])]
    for (const v of vals) out.push({ method: 'GET', path: `${path}?${q.name}=${encodeURIComponent(v)}` })
  }
  for (const e of enums) for (const v of ['bad', '', 'HEALTHY']) out.push({ method: 'GET', path: `${path}?${e.name}=${encodeURIComponent(v)}` })
  for (const s of strs) for (const v of ['é'.repeat(s.max + 1), 'x'.repeat(s.max * 4)]) out.push({ method: 'GET', path: `${path}?${s.name}=${encodeURIComponent(v)}` })
  return out
}

const BAD_UUIDS = ['abc', 'zzzzzzzz-0000-0000-0000-000000000000', '00000000-0000-0000-000000000000', '0000-0000-0000-0000-000000000000', 'urn:uuid:zz', '%7Bzz%7D', '0f0e0d0c0b0a490887060504030201']

/** Answers of the reference, one subprocess for all requests. */
async function reference(reqs: Req[]): Promise<{ status: number; body: unknown }[]> {
  const p = Bun.spawn([PY, join(import.meta.dir, 'app.py')], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  p.stdin.write(reqs.map((r) => JSON.stringify({ ...r, path: decodeURI(r.path) === r.path ? r.path : r.path })).join('\n') + '\n')
  await p.stdin.end()
  const text = await new Response(p.stdout).text()
  if ((await p.exited) !== 0) throw new Error(`reference failed: ${await new Response(p.stderr).text()}`)
  return text.trim().split('\n').map((l) => JSON.parse(l))
}

/** A 422 body with password inputs left out, also inside an echoed object (Saltdeck never echoes them). */
function comparable(body: unknown): unknown {
  const b = body as { detail?: unknown }
  if (!Array.isArray(b?.detail)) return body
  const secret = (k: unknown) => typeof k === 'string' && /password/.test(k)
  const strip = (input: unknown) =>
    input && typeof input === 'object' && !Array.isArray(input) ? Object.fromEntries(Object.entries(input).filter(([k]) => !secret(k))) : input
  return { detail: b.detail.map((e: Record<string, unknown>) => ((e.loc as unknown[]).some(secret) ? { ...e, input: undefined } : { ...e, input: strip(e.input) })) }
}

describe('422 bodies against FastAPI + pydantic', () => {
  test.skipIf(missing)('every request either side refuses with 422 gets the same status and body from both', async () => {
    const w = await testWorld()
    const roleId: string = (await call(w, 'POST', '/api/roles', { body: { name: 'ref-role' } })).body.id
    // Its own user: a valid password reset would end the admin's credentials for the rest of the run.
    const userId: string = (await call(w, 'POST', '/api/users', { body: { username: 'ref-user', password: 'ref-user-pass-1', roles: [roleId] } })).body.id
    const pollerInts = [['inventory_refresh_minutes', 0, 1440], ['inventory_refresh_initial_delay_s', 0, 3600], ['fleet_poll_interval_seconds', 0, 86400],
      ['minion_state_initial_delay_seconds', 0, 3600], ['event_stream_retention_days', 1, 365]] as const
    const reqs: Req[] = [
      ...bodies('POST', '/api/roles', { name: 'r' }, [{ name: 'name', kind: 'str', min: 1, max: 64 }, { name: 'description', kind: 'str', min: 0, max: 255 }], ['name']),
      ...bodies('PATCH', `/api/roles/${roleId}`, { description: 'd' }, [{ name: 'description', kind: 'str', min: 0, max: 255 }], []),
      // An execute grant on salt, so every valid target_glob is valid for Saltdeck too (a target on another grant is a cross-field 422).
      ...bodies('POST', `/api/roles/${roleId}/permissions`, { verb: 'execute', resource_glob: 'salt:*' }, [{ name: 'verb', kind: 'str', min: 1, max: 128 }, { name: 'resource_glob', kind: 'str', min: 1, max: 128 }, { name: 'target_glob', kind: 'str', min: 1, max: 255 }], ['verb', 'resource_glob']),
      ...bodies('POST', '/api/auth/tokens', { name: 't' }, [{ name: 'name', kind: 'str', min: 1, max: 128 }, { name: 'expires_in_days', kind: 'int', min: 1, max: 3650 }], ['name']),
      ...bodies('PUT', '/api/admin/settings/pollers', {}, [...pollerInts.map(([name, min, max]) => ({ name, kind: 'int' as const, min, max })), { name: 'event_stream_enabled', kind: 'bool' }], []),
      ...bodies('PUT', '/api/admin/settings/widget', {}, [{ name: 'widget_event_count', kind: 'int', min: 1, max: 50 }, { name: 'widget_heartbeat_minutes', kind: 'int', min: 5, max: 1440 }, { name: 'widget_hide_routine', kind: 'bool' }], []),
      ...bodies('POST', '/api/users', { username: 'new-user', password: 'long-enough-1' }, [{ name: 'username', kind: 'str', min: 1, max: 64 }, { name: 'display_name', kind: 'str', min: 0, max: 128 }, { name: 'must_change_pw', kind: 'bool' }], ['username', 'password']),
      ...bodies('POST', '/api/auth/login', { username: 'nobody', password: 'x' }, [{ name: 'username', kind: 'str', min: 1, max: 1024 }], ['username', 'password']),
      ...bodies('PUT', `/api/users/${userId}/roles`, { role_ids: [roleId] }, [], ['role_ids']),
      { method: 'PUT', path: `/api/users/${userId}/roles`, body: { role_ids: ['abc', roleId.toUpperCase(), 5] } },
      ...bodies('PATCH', `/api/users/${userId}`, { display_name: 'x' }, [{ name: 'display_name', kind: 'str', min: 0, max: 128 }, { name: 'is_active', kind: 'bool' }], []),
      ...bodies('POST', `/api/users/${userId}/password`, { new_password: 'long-enough-2' }, [{ name: 'must_change_pw', kind: 'bool' }], ['new_password']),
      ...bodies('PUT', '/api/admin/settings/logging', {}, [], []),
      { method: 'PUT', path: '/api/admin/settings/logging', body: { log_format: 'xml' } },
      ...bodies('PUT', '/api/admin/settings/salt', { username: 'u' }, [{ name: 'username', kind: 'str', min: 1, max: 255 }, { name: 'verify', kind: 'bool' }], []),
      ...['not a url', 'ftp://x', 'http://', 'x'.repeat(10), 'https://salt.example:99999'].map((url): Req => ({ method: 'PUT', path: '/api/admin/settings/salt', body: { url } })),
      { method: 'PUT', path: '/api/admin/settings/salt', body: { eauth: 'kerberos' } },
      ...['ping', 5, ['status']].map((presence_method): Req => ({ method: 'PUT', path: '/api/admin/settings/salt', body: { presence_method } })),
      ...bodies('POST', '/api/run', { tgt: '*', fun: 'test.ping' }, [{ name: 'fun', kind: 'str', min: 1, max: 255 }], ['tgt', 'fun']),
      ...[{ tgt: 5 }, { tgt: [] }, { tgt: [5] }, { tgt: '' }, { tgt_type: 'bad' }, { arg: 'x' }, { kwarg: [] }, { fun: 'a b' }].map((b): Req => ({ method: 'POST', path: '/api/run', body: { tgt: '*', fun: 'test.ping', ...b } })),
      ...queries('/api/activity', [{ name: 'since_minutes', min: 1, max: 10080 }, { name: 'limit', min: 1, max: 500 }], [], [{ name: 'search', max: 200 }, { name: 'minion', max: 255 }]),
      ...['maybe', '2', ''].map((v): Req => ({ method: 'GET', path: `/api/activity?hide_routine=${v}` })),
      ...queries('/api/inventory/packages', [{ name: 'limit', min: 1, max: 500 }], [{ name: 'sort' }, { name: 'order' }]),
      ...queries('/api/jobs', [{ name: 'limit', min: 1, max: 500 }, { name: 'offset', min: 0, max: null }]),
      ...queries('/api/inventory/packages/bash/minions', [{ name: 'limit', min: 1, max: 1000 }, { name: 'offset', min: 0, max: null }], [{ name: 'op' }], [{ name: 'version', max: 256 }, { name: 'source', max: 64 }]),
      ...['op=lt', 'version=1.0', 'op=lt&version=', 'source=&op=gt&version=1'].map((q): Req => ({ method: 'GET', path: `/api/inventory/packages/bash/minions?${q}` })),
      ...queries('/api/vulns', [{ name: 'limit', min: 1, max: 500 }, { name: 'offset', min: 0, max: null }], [{ name: 'severity' }], [{ name: 'q', max: 200 }, { name: 'package', max: 512 }]),
      ...['maybe', '2', ''].map((v): Req => ({ method: 'GET', path: `/api/vulns?include_unaffected=${v}` })),
      ...queries('/api/vulns/DSA-1', [{ name: 'limit', min: 1, max: 5000 }, { name: 'offset', min: 0, max: null }]),
      ...queries('/api/minions/web-01/vulns', [{ name: 'limit', min: 1, max: 1000 }], [{ name: 'severity' }]),
      ...queries('/api/audit', [{ name: 'since_minutes', min: 1, max: 525600 }, { name: 'limit', min: 1, max: 500 }]),
      ...queries('/api/minions/web-01/runs', [{ name: 'limit', min: 1, max: 200 }], [{ name: 'status' }]),
      ...['maybe', '2', ''].flatMap((v): Req[] => [{ method: 'GET', path: `/api/minions/web-01/runs?test=${v}` }, { method: 'GET', path: `/api/jobs?include_internal=${v}` }]),
      ...queries('/api/minions/web-01/runs/20261121080000000000/diff', [], [], [{ name: 'against', max: 64 }]),
      { method: 'GET', path: '/api/minions/web-01/runs/20261121080000000000/diff?against=' },
      ...bodies('POST', '/api/alerts/rules', { name: 'r', kind: 'run_failed' }, [{ name: 'name', kind: 'str', min: 1, max: 128 }, { name: 'renotify_minutes', kind: 'int', min: 0, max: 10080 }, { name: 'enabled', kind: 'bool' }], ['name', 'kind']),
      ...[{ kind: 'vulnerable', params: { min_severity: 'severe' } }, { params: { min_severity: 'low', x: 1 } }, { params: { for_minutes: 0 } }, { params: { x: 1 } }, { channel_ids: ['abc'] }, { channel_ids: 'x' }, { minion_glob: '' }].map((b): Req => ({ method: 'POST', path: '/api/alerts/rules', body: { name: 'r', kind: 'run_failed', ...b } })),
      ...bodies('PATCH', `/api/alerts/rules/${roleId}`, { enabled: true }, [{ name: 'name', kind: 'str', min: 1, max: 128 }, { name: 'renotify_minutes', kind: 'int', min: 0, max: 10080 }], []),
      ...bodies('POST', '/api/alerts/silences', { ends_at: '2030-01-01T00:00:00Z' }, [{ name: 'comment', kind: 'str', min: 0, max: 500 }], ['ends_at']),
      ...['tomorrow', '2030-13-01T00:00:00Z', 5].map((ends_at): Req => ({ method: 'POST', path: '/api/alerts/silences', body: { ends_at } })),
      ...bodies('POST', '/api/alerts/channels', { name: 'c', type: 'webhook', config: { url: 'http://hooks.example' } }, [{ name: 'name', kind: 'str', min: 1, max: 128 }, { name: 'enabled', kind: 'bool' }], ['name', 'type', 'config']),
      { method: 'POST', path: '/api/alerts/channels', body: { name: 'c', type: 'pager', config: {} } },
      ...queries('/api/alerts', [{ name: 'limit', min: 1, max: 500 }, { name: 'offset', min: 0, max: null }], [{ name: 'state' }], [{ name: 'subject', max: 255 }]),
      ...queries('/api/alerts/deliveries', [{ name: 'limit', min: 1, max: 500 }], [{ name: 'status' }]),
      ...queries('/api/runs/trend', [{ name: 'days', min: 1, max: 365 }]),
      ...queries('/api/runs/failing-states', [{ name: 'since_minutes', min: 1, max: 525600 }, { name: 'limit', min: 1, max: 200 }]),
      ...BAD_UUIDS.map((id): Req => ({ method: 'PATCH', path: `/api/roles/${id}`, body: { description: 5 } })),
    ]
    const theirs = await reference(reqs)
    const mismatches: string[] = []
    let compared = 0
    for (const [i, r] of reqs.entries()) {
      const ours = await call(w, r.method, r.path, r.raw !== undefined ? { raw: r.raw } : r.body !== undefined ? { body: r.body } : { headers: { 'content-type': 'application/json' } })
      const ref = theirs[i]!
      if (ours.status !== 422 && ref.status !== 422) continue
      compared++
      const a = JSON.stringify({ status: ours.status, body: comparable(ours.body) })
      const b = JSON.stringify({ status: ref.status, body: comparable(ref.body) })
      if (a !== b) mismatches.push(`${r.method} ${r.path} ${r.raw ?? JSON.stringify(r.body)}\n  saltdeck:  ${a}\n  reference: ${b}`)
    }
    console.log(`compared ${compared} refused requests of ${reqs.length}; ${mismatches.length} differ`)
    expect(compared).toBeGreaterThan(200)
    expect(mismatches).toEqual([])
  }, 60_000)
})
