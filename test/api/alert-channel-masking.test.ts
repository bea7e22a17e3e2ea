// Proves issue 20 item 6: channel destinations are credentials. Slack/Mattermost URLs, user:pass@ and token-looking
// parts of webhook URLs are masked for anyone without `manage alert:*` (viewer, operator) in every answer, shown
// whole to admins, and a masked URL sent back in a PATCH keeps the stored one (proved by a real receiver).
import { afterAll, describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { maskUrl } from '../../src/features/alerts/channel-mask'
import { sql } from '../../src/db/sql'

/** A real HTTP receiver that records the paths it is sent to. */
const paths: string[] = []
const recv = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => (paths.push(new URL(req.url).pathname + new URL(req.url).search), new Response('ok')) })
afterAll(() => recv.stop(true))
const base = `http://127.0.0.1:${recv.port}`

const SLACK = 'https://hooks.slack.com/services/T0001/B0002/XXXXsecretXXXX1234'
const MATTERMOST = 'https://chat.example.com/hooks/xk9f3h1p7qz8b2m4c6d'
const WEBHOOK = 'https://bob:hunter2@hooks.example.com/in/a1b2c3d4e5f6a7b8c9d0?token=tok-SECRET-1&team=ops#frag'

async function world() {
  const w = await testWorld()
  const mk = async (name: string, type: string, url: string) => (await call(w, 'POST', '/api/alerts/channels', { body: { name, type, config: { url } } })).body.id as string
  const ids = { slack: await mk('slack', 'slack', SLACK), mm: await mk('mm', 'slack', MATTERMOST), hook: await mk('hook', 'webhook', WEBHOOK) }
  return { w, ids }
}

describe('channel destinations', () => {
  test('the mask keeps scheme and host (and the first path segment of a Slack/Mattermost URL)', () => {
    expect(maskUrl('slack', SLACK)).toBe('https://hooks.slack.com/services/********')
    expect(maskUrl('slack', MATTERMOST)).toBe('https://chat.example.com/hooks/********')
    expect(maskUrl('slack', 'https://u:p@chat.example.com/abc')).toBe('https://chat.example.com/********')
    expect(maskUrl('webhook', WEBHOOK)).toBe('https://********@hooks.example.com/in/********?token=********&team=ops#********')
    expect(maskUrl('webhook', 'http://10.0.0.5:8080/alerts?source=saltdeck')).toBe('http://10.0.0.5:8080/alerts?source=saltdeck')
  })

  for (const who of ['viewer', 'operator'] as const) {
    test(`as ${who} (no manage alert:*), every destination reads masked, in the list and one by one`, async () => {
      const { w, ids } = await world()
      const list = await call(w, 'GET', '/api/alerts/channels', { who })
      expect(list.status).toBe(200)
      const text = JSON.stringify(list.body)
      for (const secret of ['XXXXsecretXXXX1234', 'T0001', 'xk9f3h1p7qz8b2m4c6d', 'hunter2', 'bob', 'tok-SECRET-1', 'a1b2c3d4e5f6a7b8c9d0']) expect(text).not.toContain(secret)
      const byName = Object.fromEntries(list.body.channels.map((c: any) => [c.name, c.config.url]))
      expect(byName).toEqual({ slack: 'https://hooks.slack.com/services/********', mm: 'https://chat.example.com/hooks/********', hook: maskUrl('webhook', WEBHOOK) })
      for (const id of Object.values(ids)) {
        const one = await call(w, 'GET', `/api/alerts/channels/${id}`, { who })
        expect(one.status).toBe(200)
        expect(one.body.config.url).toContain('********')
      }
      // Rules name channels by id only, and the audit log keeps no destination.
      await call(w, 'POST', '/api/alerts/rules', { body: { name: 'r', kind: 'run_failed', channel_ids: Object.values(ids) } })
      expect(JSON.stringify((await call(w, 'GET', '/api/alerts/rules', { who })).body)).not.toContain('hooks.slack.com')
      expect(JSON.stringify(await w.deps.db.rows(sql`SELECT * FROM audit_log`))).not.toContain('XXXXsecretXXXX1234')
    })
  }

  test('an admin reads destinations whole, in the list, one by one and in the answers to its writes', async () => {
    const { w, ids } = await world()
    const list = await call(w, 'GET', '/api/alerts/channels')
    expect(Object.fromEntries(list.body.channels.map((c: any) => [c.name, c.config.url]))).toEqual({ slack: SLACK, mm: MATTERMOST, hook: WEBHOOK })
    expect((await call(w, 'GET', `/api/alerts/channels/${ids.slack}`)).body.config.url).toBe(SLACK)
    expect((await call(w, 'PATCH', `/api/alerts/channels/${ids.slack}`, { body: { enabled: false } })).body.config.url).toBe(SLACK)
  })

  test('a PATCH that sends the masked URL back keeps the stored one: the test message reaches the real path', async () => {
    const w = await testWorld()
    const real = `${base}/services/T9/B9/realSecretToken123`
    const id = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mm', type: 'slack', config: { url: real } } })).body.id
    const shown = (await call(w, 'GET', `/api/alerts/channels/${id}`, { who: 'viewer' })).body.config.url
    expect(shown).toBe(`${base}/services/********`)
    const patched = await call(w, 'PATCH', `/api/alerts/channels/${id}`, { body: { name: 'mattermost', config: { url: shown } } })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ name: 'mattermost', config: { url: real } })
    paths.length = 0
    expect((await call(w, 'POST', `/api/alerts/channels/${id}/test`)).body.ok).toBe(true)
    expect(paths).toEqual(['/services/T9/B9/realSecretToken123'])
  })

  test('a webhook PATCH with its masked URL keeps user:pass and the token; a URL with the mask that is not the shown one is a 422 and changes nothing', async () => {
    const w = await testWorld()
    const real = `http://ops:pa55word@127.0.0.1:${recv.port}/in?token=abc123&team=ops`
    const id = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: real } } })).body.id
    const shown = (await call(w, 'GET', `/api/alerts/channels/${id}`, { who: 'operator' })).body.config.url
    expect(shown).toBe(`http://********@127.0.0.1:${recv.port}/in?token=********&team=ops`)
    expect((await call(w, 'PATCH', `/api/alerts/channels/${id}`, { body: { config: { url: shown } } })).body.config.url).toBe(real)
    const bad = await call(w, 'PATCH', `/api/alerts/channels/${id}`, { body: { config: { url: shown.replace('team=ops', 'team=dev') } } })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'config', 'url'] })
    expect((await call(w, 'GET', `/api/alerts/channels/${id}`)).body.config.url).toBe(real)
  })
})
