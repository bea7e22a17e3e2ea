// Proves the per-user time zone preference (issue 23 item 4): each user reads and sets their own, it defaults to the
// browser's zone, bad values are a 422 that changes nothing, and anonymous callers get 401.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { sql } from '../../src/db/sql'

describe('display preferences', () => {
  test('a user chooses UTC or local for themselves; others keep theirs; the default is local', async () => {
    const w = await testWorld()
    expect(await call(w, 'GET', '/api/auth/me/preferences', { who: 'viewer' })).toMatchObject({ status: 200, body: { time_zone: 'local' } })
    expect(await call(w, 'PUT', '/api/auth/me/preferences', { who: 'viewer', body: { time_zone: 'utc' } })).toMatchObject({ status: 200, body: { time_zone: 'utc' } })
    expect((await call(w, 'GET', '/api/auth/me/preferences', { who: 'viewer' })).body).toEqual({ time_zone: 'utc' })
    // Another user's choice is their own (a role-less user may choose too: it is no permission).
    expect((await call(w, 'GET', '/api/auth/me/preferences', { who: 'admin' })).body).toEqual({ time_zone: 'local' })
    expect((await call(w, 'PUT', '/api/auth/me/preferences', { who: 'nobody', body: { time_zone: 'utc' } })).status).toBe(200)
    expect((await call(w, 'PUT', '/api/auth/me/preferences', { who: 'viewer', body: { time_zone: 'local' } })).body).toEqual({ time_zone: 'local' })
    expect((await call(w, 'GET', '/api/auth/me/preferences', { who: 'viewer' })).body).toEqual({ time_zone: 'local' })
    expect((await call(w, 'GET', '/api/auth/me/preferences', { who: 'nobody' })).body).toEqual({ time_zone: 'utc' })
  })

  test('a zone that is not local or utc, or another field, is a 422 that changes nothing; no login is a 401', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/auth/me/preferences', { who: 'viewer', body: { time_zone: 'utc' } })
    const bad = await call(w, 'PUT', '/api/auth/me/preferences', { who: 'viewer', body: { time_zone: 'Pacific/Auckland' } })
    expect(bad.status).toBe(422)
    expect(JSON.stringify(bad.body)).toContain('time_zone')
    expect((await call(w, 'PUT', '/api/auth/me/preferences', { who: 'viewer', body: { time_zone: 'local', theme: 'dark' } })).status).toBe(422)
    expect((await call(w, 'GET', '/api/auth/me/preferences', { who: 'viewer' })).body).toEqual({ time_zone: 'utc' })
    expect((await call(w, 'GET', '/api/auth/me/preferences', { who: 'anon' })).status).toBe(401)
    expect((await call(w, 'PUT', '/api/auth/me/preferences', { who: 'anon', body: { time_zone: 'utc' } })).status).toBe(401)
  })

  test('a deleted user\'s preferences go with them', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/auth/me/preferences', { who: 'viewer', body: { time_zone: 'utc' } })
    const id = (await call(w, 'GET', '/api/users')).body.users.find((u: { username: string }) => u.username === 'view').id
    expect((await call(w, 'DELETE', `/api/users/${id}`)).status).toBe(204)
    expect(await w.deps.db.row(sql`SELECT count(*) AS n FROM user_preferences`)).toEqual({ n: 0 })
  })
})
