// Proves issue 20 item 7: an open activity stream ends within 5 s of the end of the session or token that opened it
// (logout, token revoke, deactivation, deletion, password change, a role change that takes away every view), and
// follows expiry and changes made by another process through its periodic recheck.
import { describe, expect, test } from 'bun:test'
import { ADMIN_PW, call, testWorld } from '../helpers/app'
import { activityStream } from '../../src/features/activity/stream'
import { sessionStanding } from '../../src/features/auth/service'
import { sql } from '../../src/db/sql'

type World = Awaited<ReturnType<typeof testWorld>>
const cookieOf = (r: { headers: Headers }) => /saltdeck_session=([^;]*)/.exec(r.headers.get('set-cookie') ?? '')?.[1] ?? ''
const login = async (w: World, username: string, password = 'password-123') =>
  cookieOf(await call(w, 'POST', '/api/auth/login', { who: 'anon', body: { username, password } }))
const userId = async (w: World, username: string) => (await call(w, 'GET', '/api/users')).body.users.find((u: any) => u.username === username).id as string

/** Opens the activity stream through app.handle; `ended` resolves with the milliseconds from `mark()` to the end of the body (null if still open after 5 s). */
async function openStream(w: World, headers: Record<string, string>) {
  const res = await w.app.handle(new Request('http://localhost/api/activity/stream', { headers }))
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let t0 = performance.now()
  let done = false
  const reading = (async () => {
    for (;;) if ((await reader.read()).done) return (done = true)
  })()
  return {
    mark: () => void (t0 = performance.now()),
    get done() {
      return done
    },
    async ended(ms = 5000): Promise<number | null> {
      const r = await Promise.race([reading.then(() => performance.now() - t0), Bun.sleep(ms).then(() => null)])
      if (r === null) await reader.cancel()
      return r
    },
    cancel: () => reader.cancel(),
  }
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const cookie = (c: string) => ({ cookie: `saltdeck_session=${c}` })

describe('a stream ends within 5 s of its credential', () => {
  test('logout ends the streams of that session, not of another', async () => {
    const w = await testWorld()
    const c = await login(w, 'view')
    const mine = await openStream(w, cookie(c))
    const other = await openStream(w, bearer(w.tokens.viewer))
    mine.mark()
    expect((await call(w, 'POST', '/api/auth/logout', { who: { cookie: c } })).status).toBe(204)
    expect(await mine.ended()).toBeLessThan(5000)
    expect(other.done).toBe(false)
    await other.cancel()
  })

  test('revoking an API token ends its stream', async () => {
    const w = await testWorld()
    const t = (await call(w, 'POST', '/api/auth/tokens', { who: 'viewer', body: { name: 'script' } })).body
    const s = await openStream(w, bearer(t.token))
    s.mark()
    expect((await call(w, 'DELETE', `/api/auth/tokens/${t.id}`, { who: 'viewer' })).status).toBe(204)
    expect(await s.ended()).toBeLessThan(5000)
  })

  test("deactivating a user ends its tokens' and sessions' streams", async () => {
    const w = await testWorld()
    const token = (await call(w, 'POST', '/api/auth/tokens', { who: 'viewer', body: { name: 'script' } })).body.token
    const viaToken = await openStream(w, bearer(token))
    const viaSession = await openStream(w, bearer(w.tokens.viewer))
    viaToken.mark()
    viaSession.mark()
    expect((await call(w, 'PATCH', `/api/users/${await userId(w, 'view')}`, { body: { is_active: false } })).status).toBe(200)
    expect(await viaToken.ended()).toBeLessThan(5000)
    expect(await viaSession.ended()).toBeLessThan(5000)
  })

  test("deleting a user ends its streams", async () => {
    const w = await testWorld()
    const s = await openStream(w, bearer(w.tokens.viewer))
    s.mark()
    expect((await call(w, 'DELETE', `/api/users/${await userId(w, 'view')}`)).status).toBe(204)
    expect(await s.ended()).toBeLessThan(5000)
  })

  test('an own password change ends the streams of other sessions and tokens, not of the session it was made from', async () => {
    const w = await testWorld()
    const c = await login(w, 'view')
    const token = (await call(w, 'POST', '/api/auth/tokens', { who: { cookie: c }, body: { name: 'script' } })).body.token
    const kept = await openStream(w, cookie(c))
    const other = await openStream(w, bearer(w.tokens.viewer))
    const viaToken = await openStream(w, bearer(token))
    other.mark()
    viaToken.mark()
    expect((await call(w, 'POST', '/api/auth/change-password', { who: { cookie: c }, body: { current_password: 'password-123', new_password: 'brand-new-pw-2' } })).status).toBe(204)
    expect(await other.ended()).toBeLessThan(5000)
    expect(await viaToken.ended()).toBeLessThan(5000)
    expect(kept.done).toBe(false)
    await kept.cancel()
  })

  test("an admin's password reset ends every stream of the user", async () => {
    const w = await testWorld()
    const s = await openStream(w, bearer(w.tokens.viewer))
    s.mark()
    expect((await call(w, 'POST', `/api/users/${await userId(w, 'view')}/password`, { body: { new_password: 'reset-pass-2' } })).status).toBe(204)
    expect(await s.ended()).toBeLessThan(5000)
  })

  test('a role change that takes away every view ends the stream; one that keeps a view does not', async () => {
    const w = await testWorld()
    const id = await userId(w, 'view')
    const keeps = await call(w, 'POST', '/api/roles', { body: { name: 'key-watchers' } })
    await call(w, 'POST', `/api/roles/${keeps.body.id}/permissions`, { body: { verb: 'view', resource_glob: 'key:*' } })
    const s = await openStream(w, bearer(w.tokens.viewer))
    expect((await call(w, 'PUT', `/api/users/${id}/roles`, { body: { role_ids: [keeps.body.id] } })).status).toBe(200)
    await Bun.sleep(100)
    expect(s.done).toBe(false)
    s.mark()
    expect((await call(w, 'PUT', `/api/users/${id}/roles`, { body: { role_ids: [] } })).status).toBe(200)
    expect(await s.ended()).toBeLessThan(5000)
  })
})

describe('the periodic recheck is the backstop', () => {
  test('a session that expires (by the injected clock) ends its stream', async () => {
    const w = await testWorld()
    await login(w, 'admin', ADMIN_PW)
    const session = (await w.deps.db.row<{ id: string }>(sql`SELECT id FROM sessions ORDER BY created_at DESC LIMIT 1`))!.id
    expect(await sessionStanding(w.deps, session)).not.toBeNull()
    const res = activityStream(w.deps, {}, [{ verb: '*', resource_glob: '*' }], 0, { sessionId: session, recheckMs: 20 })
    const reader = res.body!.getReader()
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return true
    })()
    await Bun.sleep(100)
    expect(await Promise.race([ended, Bun.sleep(10).then(() => false)])).toBe(false)
    w.clock.advance(w.deps.config.sessionTtlMinutes * 60_000)
    expect(await Promise.race([ended, Bun.sleep(1000).then(() => false)])).toBe(true)
  })

  test('a revocation written by another process (no in-process notice) ends the stream within the recheck period', async () => {
    const w = await testWorld()
    const s = await openStream(w, bearer(w.tokens.viewer))
    s.mark()
    // What `saltdeck user reset-password` does from its own process: delete the rows; nothing here is told.
    await w.deps.db.exec(sql`DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE username = 'view')`)
    expect(await s.ended()).toBeLessThan(5000)
  })
})
