// Proves the 422 body of contract §1.1: every bound, type and coercion rule, all problems at once, and 401→403→422.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { POLLER_FIELDS, WIDGET_FIELDS } from '../../src/features/settings/schema'

let w: Awaited<ReturnType<typeof testWorld>>
beforeAll(async () => {
  w = await testWorld()
})

/** Integer fields with inclusive bounds, by endpoint. */
const INT_BOUNDS: [string, string, number, number][] = [
  ['pollers', 'inventory_refresh_minutes', 0, 1440],
  ['pollers', 'inventory_refresh_initial_delay_s', 0, 3600],
  ['pollers', 'fleet_poll_interval_seconds', 0, 86400],
  ['pollers', 'jobs_poll_interval_seconds', 0, 86400],
  ['pollers', 'minion_state_keys_interval_seconds', 0, 86400],
  ['pollers', 'minion_state_presence_interval_seconds', 0, 86400],
  ['pollers', 'minion_state_grains_interval_seconds', 0, 86400],
  ['pollers', 'minion_state_initial_delay_seconds', 0, 3600],
  ['pollers', 'event_stream_retention_days', 1, 365],
  ['widget', 'widget_event_count', 1, 50],
  ['widget', 'widget_heartbeat_minutes', 5, 1440],
]

test('the bounds table covers every integer settings field', () => {
  const ints = [...Object.entries(POLLER_FIELDS), ...Object.entries(WIDGET_FIELDS)].filter(([, [s]]) => (s as any).type === 'integer').map(([k]) => k)
  expect(INT_BOUNDS.map(([, f]) => f).sort()).toEqual(ints.sort())
})

describe.each(INT_BOUNDS)('PUT /api/admin/settings/%s %s', (section, field, min, max) => {
  const put = (v: unknown) => call(w, 'PUT', `/api/admin/settings/${section}`, { body: { [field]: v } })
  test.each([min, max])('accepts %p and stores it', async (v) => {
    const r = await put(v)
    expect(r.status).toBe(200)
    expect(r.body[section][field]).toBe(v)
  })
  test('min-1 is greater_than_equal', async () => {
    const r = await put(min - 1)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ detail: [{ type: 'greater_than_equal', loc: ['body', field], msg: `Input should be greater than or equal to ${min}`, input: min - 1, ctx: { ge: min } }] })
  })
  test('max+1 is less_than_equal', async () => {
    const r = await put(max + 1)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ detail: [{ type: 'less_than_equal', loc: ['body', field], msg: `Input should be less than or equal to ${max}`, input: max + 1, ctx: { le: max } }] })
  })
  test('lax integers: "N", N.0 and " N " are accepted', async () => {
    expect((await put(String(max))).body[section][field]).toBe(max)
    expect((await call(w, 'PUT', `/api/admin/settings/${section}`, { raw: `{"${field}": ${min}.0}` })).body[section][field]).toBe(min)
    expect((await put(` ${min} `)).body[section][field]).toBe(min)
  })
  test('a JSON bool is read as 0/1, as in pydantic lax mode (out of bounds: a bound error with the bool as input)', async () => {
    const r = await put(min <= 1 && max >= 1 ? true : false)
    if (min <= 1 && max >= 1) expect(r.body[section][field]).toBe(1)
    else expect(r.body.detail[0]).toMatchObject({ type: min > 1 ? 'greater_than_equal' : 'less_than_equal', input: false })
  })
  test.each([
    [1.5, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'],
    ['abc', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    [[1], 'int_type', 'Input should be a valid integer'],
    [{ a: 1 }, 'int_type', 'Input should be a valid integer'],
  ])('%p is %s', async (v, type, msg) => {
    const r = await put(v)
    expect(r.status).toBe(422)
    expect(r.body.detail).toEqual([{ type, loc: ['body', field], msg, input: v }])
  })
  test('null leaves the stored value alone', async () => {
    await put(max)
    const r = await put(null)
    expect(r.status).toBe(200)
    expect(r.body[section][field]).toBe(max)
  })
})

const BOOLS: [string, string][] = [
  ['pollers', 'event_stream_enabled'],
  ...(['widget_hide_dispatch', 'widget_hide_routine', 'widget_show_jobs', 'widget_show_keys', 'widget_show_minions'] as const).map((f) => ['widget', f] as [string, string]),
  ['salt', 'verify'],
]

describe.each(BOOLS)('PUT /api/admin/settings/%s %s', (section, field) => {
  const put = (v: unknown) => call(w, 'PUT', `/api/admin/settings/${section}`, { body: { [field]: v } })
  const stored = (r: { body: any }) => r.body[section][field]
  test.each([
    [true, true], [false, false], [1, true], [0, false], ['yes', true], ['NO', false], ['on', true], ['off', false],
    ['t', true], ['F', false], ['y', true], ['n', false], ['True', true], ['0', false], ['1', true],
  ])('%p reads as %p', async (v, want) => {
    const r = await put(v)
    expect(r.status).toBe(200)
    expect(stored(r)).toBe(want)
  })
  test.each([
    ['maybe', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    [2, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    [{}, 'bool_type', 'Input should be a valid boolean'],
    [[true], 'bool_type', 'Input should be a valid boolean'],
  ])('%p is %s', async (v, type, msg) => {
    const r = await put(v)
    expect(r.status).toBe(422)
    expect(r.body.detail).toEqual([{ type, loc: ['body', field], msg, input: v }])
  })
})

describe('request bodies', () => {
  const put = (opts: Parameters<typeof call>[3]) => call(w, 'PUT', '/api/admin/settings/pollers', opts)
  test('every problem is reported at once, unknown properties last', async () => {
    const r = await put({ body: { zz: 1, fleet_poll_interval_seconds: -1, event_stream_enabled: 'x', jobs_poll_interval_seconds: 1.5 } })
    expect(r.status).toBe(422)
    expect(r.body.detail.map((d: any) => [d.type, d.loc[1]])).toEqual([
      ['greater_than_equal', 'fleet_poll_interval_seconds'],
      ['int_from_float', 'jobs_poll_interval_seconds'],
      ['bool_parsing', 'event_stream_enabled'],
      ['extra_forbidden', 'zz'],
    ])
    expect(r.body.detail[3]).toEqual({ type: 'extra_forbidden', loc: ['body', 'zz'], msg: 'Extra inputs are not permitted', input: 1 })
  })
  test('a rejected body changes nothing', async () => {
    const before = (await call(w, 'GET', '/api/admin/settings')).body
    const r = await put({ body: { fleet_poll_interval_seconds: 120, jobs_poll_interval_seconds: 999999 } })
    expect(r.status).toBe(422)
    expect((await call(w, 'GET', '/api/admin/settings')).body).toEqual(before)
  })
  test('{} is accepted and only moves updated_at', async () => {
    const before = (await call(w, 'GET', '/api/admin/settings')).body
    w.clock.advance(5000)
    const r = await put({ body: {} })
    expect(r.status).toBe(200)
    expect(r.body.pollers).toEqual(before.pollers)
    expect(Date.parse(r.body.updated_at) - Date.parse(before.updated_at)).toBe(5000)
    expect(r.body.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })
  test('absent body is missing at ["body"]', async () => {
    const r = await put({ headers: { 'content-type': 'application/json' } })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] })
  })
  test.each([[[1, 2]], ['"text"'], [42]])('non-object JSON %p is model_attributes_type', async (v) => {
    const r = await put({ raw: JSON.stringify(v) })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ detail: [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: v }] })
  })
  test('a JSON null body is no body: missing at ["body"], as FastAPI reads it', async () => {
    expect((await put({ raw: 'null' })).body).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] })
  })
  test.each([
    ['{"a": 1', 7, "Expecting ',' delimiter"],
    ['{"a" 1}', 5, "Expecting ':' delimiter"],
    ['{a: 1}', 1, 'Expecting property name enclosed in double quotes'],
    ['{"a": }', 6, 'Expecting value'],
    ['{} x', 3, 'Extra data'],
    ['{"a": "b', 6, 'Unterminated string starting at'],
    ['nul', 0, 'Expecting value'],
    ['[1, 2,]', 6, 'Expecting value'],
  ])('malformed JSON %p is json_invalid at %p', async (raw, pos, error) => {
    const r = await put({ raw })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ detail: [{ type: 'json_invalid', loc: ['body', pos], msg: 'JSON decode error', input: {}, ctx: { error } }] })
  })
  test('malformed JSON is 422 even before authentication', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/pollers', { who: 'anon', raw: '{' })
    expect(r.status).toBe(422)
    expect(r.body.detail[0].type).toBe('json_invalid')
  })
  test('a non-JSON content type is 415', async () => {
    const r = await put({ raw: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(r).toMatchObject({ status: 415, body: { detail: 'Content-Type must be application/json' } })
  })
  test('JSON with a charset parameter is accepted', async () => {
    const r = await put({ raw: '{"jobs_poll_interval_seconds": 7}', headers: { 'content-type': 'application/json; charset=utf-8' } })
    expect(r.status).toBe(200)
  })
  test('a body over 1 MiB is 413', async () => {
    const r = await put({ raw: JSON.stringify({ x: 'a'.repeat(1024 * 1024) }) })
    expect(r).toMatchObject({ status: 413, body: { detail: 'Request body too large' } })
  })
})

describe('401 → 403 → 422 precedence', () => {
  const bad = { fleet_poll_interval_seconds: -5 }
  test('no session: 401 even with a bad body', async () => {
    expect(await call(w, 'PUT', '/api/admin/settings/pollers', { who: 'anon', body: bad })).toMatchObject({ status: 401, body: { detail: 'Not authenticated' } })
  })
  test('unknown token: 401', async () => {
    expect((await call(w, 'PUT', '/api/admin/settings/pollers', { who: { token: 'nope' }, body: bad })).status).toBe(401)
  })
  test('viewer: 403 even with a bad body', async () => {
    expect(await call(w, 'PUT', '/api/admin/settings/pollers', { who: 'viewer', body: bad })).toMatchObject({ status: 403, body: { detail: 'Forbidden' } })
  })
  test('admin: 422', async () => {
    expect((await call(w, 'PUT', '/api/admin/settings/pollers', { body: bad })).status).toBe(422)
  })
  test('viewer with a bad query: 422 on a route it may read', async () => {
    expect((await call(w, 'GET', '/api/inventory/packages?limit=0', { who: 'viewer' })).status).toBe(422)
  })
  test('anon with a bad query: 401', async () => {
    expect((await call(w, 'GET', '/api/inventory/packages?limit=0', { who: 'anon' })).status).toBe(401)
  })
})

/** Query integer bounds: path, parameter, min, max. */
const QUERY_BOUNDS: [string, string, number, number | null][] = [
  ['/api/activity', 'since_minutes', 1, 10080],
  ['/api/activity', 'limit', 1, 500],
  ['/api/activity', 'offset', 0, null],
  ['/api/minions/web-01/runs', 'limit', 1, 200],
  ['/api/minions/web-01/runs', 'offset', 0, null],
  ['/api/inventory/packages', 'limit', 1, 500],
  ['/api/inventory/packages', 'offset', 0, null],
  ['/api/minions', 'limit', 1, 500],
  ['/api/audit', 'limit', 1, 500],
]

describe.each(QUERY_BOUNDS)('GET %s ?%s', (path, name, min, max) => {
  const get = (v: string) => call(w, 'GET', `${path}?${name}=${encodeURIComponent(v)}`)
  test('min is accepted', async () => expect((await get(String(min))).status).toBe(200))
  test('min-1 is greater_than_equal with a string input', async () => {
    const r = await get(String(min - 1))
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ detail: [{ type: 'greater_than_equal', loc: ['query', name], msg: `Input should be greater than or equal to ${min}`, input: String(min - 1), ctx: { ge: min } }] })
  })
  if (max !== null) {
    test('max is accepted', async () => expect((await get(String(max))).status).toBe(200))
    test('max+1 is less_than_equal', async () => {
      const r = await get(String(max + 1))
      expect(r.status).toBe(422)
      expect(r.body.detail[0]).toMatchObject({ type: 'less_than_equal', loc: ['query', name], ctx: { le: max } })
    })
  }
  test('not a number is int_parsing', async () => {
    const r = await get('ten')
    expect(r.body).toEqual({ detail: [{ type: 'int_parsing', loc: ['query', name], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'ten' }] })
  })
  test('an integral float string is accepted', async () => expect((await get(`${min}.0`)).status).toBe(200))
  test('a fractional string is int_parsing', async () => expect((await get(`${min}.5`)).body.detail[0].type).toBe('int_parsing'))
})

describe('other query and path rules', () => {
  test('all query problems at once', async () => {
    const r = await call(w, 'GET', '/api/activity?since_minutes=0&limit=501&offset=-1')
    expect(r.body.detail.map((d: any) => d.loc)).toEqual([['query', 'since_minutes'], ['query', 'limit'], ['query', 'offset']])
  })
  test('unknown query parameters are ignored', async () => expect((await call(w, 'GET', '/api/activity?foo=bar')).status).toBe(200))
  test('activity search longer than 200 is string_too_long', async () => {
    const r = await call(w, 'GET', `/api/activity?search=${'x'.repeat(201)}`)
    expect(r.body.detail[0]).toMatchObject({ type: 'string_too_long', loc: ['query', 'search'], msg: 'String should have at most 200 characters', ctx: { max_length: 200 } })
  })
  test('hide_dispatch takes lax booleans', async () => {
    expect((await call(w, 'GET', '/api/activity?hide_dispatch=yes')).status).toBe(200)
    expect((await call(w, 'GET', '/api/activity?hide_dispatch=perhaps')).body.detail[0].type).toBe('bool_parsing')
  })
  test.each([
    ['sort', 'size', "'name', 'minion_count', 'version_count' or 'last_seen'"],
    ['order', 'up', "'asc' or 'desc'"],
  ])('packages %s=%s is literal_error', async (name, v, expected) => {
    const r = await call(w, 'GET', `/api/inventory/packages?${name}=${v}`)
    expect(r.body).toEqual({ detail: [{ type: 'literal_error', loc: ['query', name], msg: `Input should be ${expected}`, input: v, ctx: { expected } }] })
  })
  test('runs status must be one of the four', async () => {
    const r = await call(w, 'GET', '/api/minions/web-01/runs?status=bad')
    expect(r.body.detail[0]).toMatchObject({ type: 'literal_error', ctx: { expected: "'healthy', 'changed', 'unhealthy' or 'blocked'" } })
  })
  // The reasons as FastAPI 0.165 + pydantic 2.14 give them for the same inputs.
  test.each([
    ['abc', 'invalid length: found 3'],
    ['zzzzzzzz-0000-0000-0000-000000000000', 'invalid character: found `z` at 0'],
    ['00000000-0000-0000-000000000000', 'invalid group count: expected 5, found 4'],
    ['0000-0000-0000-0000-000000000000', 'invalid group length in group 0: expected 8, found 4'],
    ['%7Bzz%7D', 'invalid character: found `z` at 1'],
    ['urn:uuid:zz', 'invalid character: found `z` at 9'],
    ['%7B0f0e0d0c-0b0a-4908-8706-05040302010%7D', 'invalid group length in group 4: expected 12, found 13'],
    ['urn:uuid:0f0e0d0c0b0a49088706050403020100', 'invalid group count: expected 5, found 1'],
    ['0f0e0d0c0b0a4908870605040302010-', 'invalid group count: expected 5, found 2'],
    ['0f0e0d0c0b0a490887060504030201', 'invalid length: found 30'],
  ])('role_id %p is uuid_parsing', async (id, reason) => {
    const r = await call(w, 'PATCH', `/api/roles/${id}`, { body: { description: 'x' } })
    expect(r.body).toEqual({ detail: [{ type: 'uuid_parsing', loc: ['path', 'role_id'], msg: `Input should be a valid UUID, ${reason}`, input: decodeURIComponent(id), ctx: { error: reason } }] })
  })
  test('a UUID in any form pydantic reads (upper case, simple, braced, urn:uuid:) finds the same record', async () => {
    const id: string = (await call(w, 'GET', '/api/roles')).body.roles[0].id
    const forms = [id.toUpperCase(), id.replace(/-/g, ''), `%7B${id}%7D`, `urn:uuid:${id.toUpperCase()}`]
    for (const f of forms) expect(await call(w, 'GET', `/api/roles/${f}`)).toMatchObject({ status: 200, body: { id } })
  })
  test('path and body problems are reported together', async () => {
    const r = await call(w, 'PATCH', '/api/roles/abc', { body: { description: 5, name: 'x' } })
    expect(r.body.detail.map((d: any) => d.type)).toEqual(['uuid_parsing', 'string_type', 'extra_forbidden'])
  })
  test('an unknown path under /api is 404 Not Found', async () => {
    expect(await call(w, 'GET', '/api/nothing/here')).toMatchObject({ status: 404, body: { detail: 'Not Found' } })
  })
  test('a known path with the wrong method is 405', async () => {
    const r = await call(w, 'DELETE', '/api/activity')
    expect(r).toMatchObject({ status: 405, body: { detail: 'Method Not Allowed' } })
    expect(r.headers.get('allow')).toBe('GET')
  })
})

describe('enum, string and URL fields', () => {
  test('log_format is literal_error', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/logging', { body: { log_format: 'xml' } })
    expect(r.body).toEqual({ detail: [{ type: 'literal_error', loc: ['body', 'log_format'], msg: "Input should be 'json' or 'text'", input: 'xml', ctx: { expected: "'json' or 'text'" } }] })
  })
  test('eauth lists all five values', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { eauth: 'kerberos' } })
    expect(r.body.detail[0].ctx).toEqual({ expected: "'pam', 'sharedsecret', 'ldap', 'file' or 'auto'" })
  })
  test('strings are never coerced from numbers', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { username: 5 } })
    expect(r.body.detail).toEqual([{ type: 'string_type', loc: ['body', 'username'], msg: 'Input should be a valid string', input: 5 }])
  })
  test('url scheme must be http or https', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'ftp://salt:8000' } })
    expect(r.body.detail[0]).toMatchObject({ type: 'url_scheme', loc: ['body', 'url'], msg: "URL scheme should be 'http' or 'https'" })
  })
  test('a relative url is url_parsing', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'salt-master' } })
    expect(r.body.detail[0]).toMatchObject({ type: 'url_parsing', msg: 'Input should be a valid URL, relative URL without a base' })
  })
  test('url over 2048 characters is string_too_long', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: `http://x/${'a'.repeat(2048)}` } })
    expect(r.body.detail[0]).toMatchObject({ type: 'string_too_long', ctx: { max_length: 2048 } })
  })
  test('a password problem never echoes the input', async () => {
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { password: '' } })
    expect(r.body).toEqual({ detail: [{ type: 'string_too_short', loc: ['body', 'password'], msg: 'String should have at least 1 character', ctx: { min_length: 1 } }] })
  })
  test('salt PUT needs one non-null property', async () => {
    for (const body of [{}, { url: null, username: null }]) {
      const r = await call(w, 'PUT', '/api/admin/settings/salt', { body })
      expect(r.status).toBe(422)
      expect(r.body.detail).toEqual([{ type: 'value_error', loc: ['body'], msg: 'Value error, at least one salt field must be provided', input: body, ctx: { error: {} } }])
    }
  })
  test('missing required login fields', async () => {
    const r = await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { extra: 1 } })
    expect(r.body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'username'], msg: 'Field required', input: { extra: 1 } }, { type: 'missing', loc: ['body', 'password'], msg: 'Field required', input: { extra: 1 } }] })
  })
})

// Checked by hand against FastAPI 0.165 + pydantic 2.14 declaring the same models (issue 9, item 14).
describe('422 bodies as the pydantic reference gives them', () => {
  test('input is the value as sent: a query string stays a string, a trimmed name keeps its spaces', async () => {
    expect((await call(w, 'GET', '/api/jobs?limit=1441')).body).toEqual({ detail: [{ type: 'less_than_equal', loc: ['query', 'limit'], msg: 'Input should be less than or equal to 500', input: '1441', ctx: { le: 500 } }] })
    const r = await call(w, 'POST', '/api/roles', { body: { name: '   ' } })
    expect(r.body.detail[0]).toMatchObject({ type: 'string_too_short', loc: ['body', 'name'], input: '   ' })
  })
  test('a missing field echoes the enclosing object, password fields left out', async () => {
    expect((await call(w, 'POST', '/api/roles', { body: { description: 'x' } })).body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: { description: 'x' } }] })
    const login = await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { password: 'sekret-guess' } })
    expect(login.body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'username'], msg: 'Field required', input: {} }] })
  })
  test('an integer string may group digits with underscores, as Python reads it (5_0 is 50)', async () => {
    expect((await call(w, 'GET', '/api/jobs?limit=5_0')).status).toBe(200)
    expect((await call(w, 'GET', '/api/jobs?limit=5__0')).body.detail[0]).toMatchObject({ type: 'int_parsing', input: '5__0' })
  })
})

describe('bodies that cannot be parsed', () => {
  test('invalid UTF-8 inside a JSON string is json_invalid, not a field error on a replacement character', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"name": "a'), 0xff, ...new TextEncoder().encode('"}')])
    const r = await w.app.handle(new Request('http://localhost/api/roles', { method: 'POST', headers: { authorization: `Bearer ${w.tokens.admin}`, 'content-type': 'application/json' }, body: bytes }))
    expect(r.status).toBe(422)
    expect(await r.json()).toEqual({ detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: 'Invalid UTF-8 in the body' } }] })
    expect((await call(w, 'GET', '/api/roles')).body.roles.map((x: any) => x.name)).not.toContain('a\ufffd')
  })
})

describe('offsets far past the end', () => {
  test.each(['/api/jobs', '/api/activity', '/api/minions', '/api/minions/web-01/runs', '/api/audit', '/api/inventory/packages', '/api/minions/web-01/packages'])(
    '%s?offset=2^63-1 (and 10^30) is an empty page with the true total',
    async (path) => {
      for (const offset of ['9223372036854775807', '1' + '0'.repeat(30)]) {
        const r = await call(w, 'GET', `${path}?offset=${offset}`)
        expect(r.status).toBe(200)
        const items = Object.values(r.body).find(Array.isArray) as unknown[]
        expect(items).toEqual([])
        expect(r.body.total).toBe((await call(w, 'GET', path)).body.total)
      }
    },
  )
})
