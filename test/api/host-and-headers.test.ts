// Proves two defaults of issue 9 item 11: every answer carries X-Content-Type-Options: nosniff (API and errors too),
// and bound to a loopback address Saltdeck answers only to loopback names and SALTDECK_PUBLIC_URL's host (DNS rebinding).
import { expect, test } from 'bun:test'
import { testWorld } from '../helpers/app'

const get = (w: Awaited<ReturnType<typeof testWorld>>, url: string) => w.app.handle(new Request(url, { headers: { authorization: `Bearer ${w.tokens.admin}` } }))

test('nosniff on API answers, errors and the dashboard alike', async () => {
  const w = await testWorld()
  for (const path of ['/api/auth/me', '/api/nothing', '/api/jobs?limit=0', '/metrics', '/healthz', '/'])
    expect((await get(w, `http://localhost${path}`)).headers.get('x-content-type-options')).toBe('nosniff')
})

test('on a loopback bind, a rebinding host name is 421 with a JSON sentence; loopback names and the public URL answer', async () => {
  const w = await testWorld({ host: '127.0.0.1', publicUrl: 'https://saltdeck.example.com/' })
  const evil = await get(w, 'http://attacker.example:8080/api/auth/me')
  expect(evil.status).toBe(421)
  expect(((await evil.json()) as { detail: string }).detail).toStartWith('Host not allowed')
  for (const host of ['localhost:8080', '127.0.0.1:8080', '127.1.2.3', '[::1]:8080', 'saltdeck.example.com'])
    expect((await get(w, `http://${host}/api/auth/me`)).status).toBe(200)
})

test('bound elsewhere (the operator chose to expose it), any host name answers', async () => {
  const w = await testWorld({ host: '0.0.0.0' })
  expect((await get(w, 'http://saltdeck.internal:8080/api/auth/me')).status).toBe(200)
})
