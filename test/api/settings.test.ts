// Proves contract §5: defaults, partial updates, the encrypted write-only salt password, status, widget-config, env overrides and live log format.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { applyEnvSalt, saltCredentials } from '../../src/features/settings/service'
import { decrypt } from '../../src/lib/secret'
import { sql } from '../../src/db/sql'

describe('settings', () => {
  test('salt password is stored encrypted, never returned, and decrypts for the client', async () => {
    const w = await testWorld()
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'https://salt.example:8000', username: 'saltdeck', password: 'sup3r-secret', eauth: 'sharedsecret', verify: false } })
    expect(r.status).toBe(200)
    expect(r.body.salt).toEqual({ url: 'https://salt.example:8000', username: 'saltdeck', password_set: true, verify: false, eauth: 'sharedsecret', presence_method: 'present' })
    expect(JSON.stringify(r.body)).not.toContain('sup3r-secret')
    const raw = (await w.deps.db.row<{ value: string }>(sql`SELECT value FROM settings WHERE section = 'salt'`))!.value
    expect(raw).not.toContain('sup3r-secret')
    expect(decrypt(w.deps.secretKey, JSON.parse(raw).password_enc)).toBe('sup3r-secret')
    expect(saltCredentials(w.deps).password).toBe('sup3r-secret')
    const audit = (await call(w, 'GET', '/api/audit?action=settings.salt')).body.entries[0]
    expect(JSON.stringify(audit)).not.toContain('sup3r-secret')
    expect(audit.detail).toContain('password')
  })
  test('status lists exactly the missing salt fields', async () => {
    const w = await testWorld()
    expect((await call(w, 'GET', '/api/admin/settings/status')).body).toEqual({ configured: false, missing: ['salt.url', 'salt.username', 'salt.password'] })
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.1:8000' } })
    expect((await call(w, 'GET', '/api/admin/settings/status')).body).toEqual({ configured: false, missing: ['salt.username', 'salt.password'] })
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { username: 'u', password: 'p' } })
    expect((await call(w, 'GET', '/api/admin/settings/status')).body).toEqual({ configured: true, missing: [] })
  })
  test('a partial update leaves the other fields alone', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/admin/settings/widget', { body: { widget_event_count: 20, widget_hide_routine: true } })
    const r = await call(w, 'PUT', '/api/admin/settings/widget', { body: { widget_event_count: 9, widget_hide_routine: null } })
    expect(r.body.widget).toEqual({ widget_hide_dispatch: true, widget_hide_routine: true, widget_show_jobs: true, widget_show_keys: true, widget_show_minions: true, widget_event_count: 9, widget_heartbeat_minutes: 60 })
  })
  test('widget-config answers any logged-in user with the seven fields', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/admin/settings/widget', { body: { widget_show_keys: false } })
    const r = await call(w, 'GET', '/api/activity/widget-config', { who: 'nobody' })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['widget_event_count', 'widget_heartbeat_minutes', 'widget_hide_dispatch', 'widget_hide_routine', 'widget_show_jobs', 'widget_show_keys', 'widget_show_minions'])
    expect(r.body.widget_show_keys).toBe(false)
  })
  test('logging format switches the logger at once', async () => {
    const w = await testWorld()
    expect(w.deps.log.format).toBe('json')
    await call(w, 'PUT', '/api/admin/settings/logging', { body: { log_format: 'text' } })
    expect(w.deps.log.format).toBe('text')
  })
  test('a change notifies the change hook with its section', async () => {
    const w = await testWorld()
    const seen: string[] = []
    w.deps.onSettingsChanged = (s) => seen.push(s)
    await call(w, 'PUT', '/api/admin/settings/pollers', { body: { jobs_poll_interval_seconds: 30 } })
    await call(w, 'PUT', '/api/admin/settings/pollers', { body: { jobs_poll_interval_seconds: -1 } })
    expect(seen).toEqual(['pollers'])
  })
  test('SALTDECK_SALT_* values win over the stored ones at start', async () => {
    const w = await testWorld({ saltUrl: 'http://env-salt:8000', saltEauth: 'file', saltPassword: 'env-pw', presenceMethod: 'status' })
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://stored:8000', username: 'kept', presence_method: 'present' } })
    await applyEnvSalt(w.deps)
    const s = (await call(w, 'GET', '/api/admin/settings')).body.salt
    expect(s).toEqual({ url: 'http://env-salt:8000', username: 'kept', password_set: true, verify: true, eauth: 'file', presence_method: 'status' })
    expect(saltCredentials(w.deps).password).toBe('env-pw')
  })
  test('presence_method is a stored salt setting, present by default; status is accepted, anything else is 422 and changes nothing', async () => {
    const w = await testWorld()
    expect((await call(w, 'GET', '/api/admin/settings')).body.salt.presence_method).toBe('present')
    expect((await call(w, 'PUT', '/api/admin/settings/salt', { body: { presence_method: 'status' } })).body.salt.presence_method).toBe('status')
    const bad = await call(w, 'PUT', '/api/admin/settings/salt', { body: { presence_method: 'ping' } })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['body', 'presence_method'])
    expect((await call(w, 'GET', '/api/admin/settings')).body.salt.presence_method).toBe('status')
    const p = await call(w, 'PUT', '/api/admin/settings/pollers', { body: { presence_method: 'status' } })
    expect(p.status).toBe(422)
  })
})
