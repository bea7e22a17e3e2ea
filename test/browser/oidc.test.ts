// Sign-in with OpenID Connect in Debian's chromium: the compiled binary, a real provider (panva's oidc-provider under
// Node, test/oidc), the login page's button → the provider → back signed in; a user whose groups map to nothing comes
// back to the login page with the sentence; the admin's Identity page shows the callback URL and Tests the issuer.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { missingTool } from '../helpers/tools'
import { startServe, type Served } from '../helpers/serve'
import { oidcProviderReady, startOidcProvider, type OidcProvider } from '../helpers/oidc-provider'
import { buildBinary, CHROMIUM, launchChromium, shot, watchedContext, type Browser } from './harness'

const noBrowser = missingTool(CHROMIUM, 'apt-get install chromium', 'browser tests')
const ready = !noBrowser && oidcProviderReady()
const ADMIN_PW = 'oidc-browser-admin-pw'

let served: Served
let idp: OidcProvider
let browser: Browser

/** Calls the API as the admin (a session made by a password login). */
async function adminApi(method: string, path: string, body?: unknown) {
  const login = await fetch(`${served.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: ADMIN_PW }) })
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const r = await fetch(served.url + path, { method, headers: { cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`)
  return r.json() as Promise<any>
}

describe.skipIf(!ready)('OpenID Connect sign-in in the browser', () => {
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'saltdeck-oidc-browser-'))
    const bin = await buildBinary(root)
    served = await startServe(join(root, 'data'), { SALTDECK_ADMIN_PASSWORD: ADMIN_PW, SALTDECK_ARGON2_MEMORY_KIB: '1024' }, [bin])
    ;[idp, browser] = await Promise.all([startOidcProvider(`${served.url}/api/auth/oidc/callback`), launchChromium()])
    await adminApi('PUT', '/api/admin/identity/oidc', { enabled: true, issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, display_name: 'Test IdP' })
    const operator = (await adminApi('GET', '/api/roles')).roles.find((r: { name: string }) => r.name === 'operator').id
    await adminApi('POST', '/api/admin/identity/mappings', { provider: 'oidc', group: 'ops', role_id: operator })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    idp?.stop()
    await served?.stop()
  })

  test('the button goes to the provider and comes back signed in, with the mapped role', async () => {
    const w = await watchedContext(browser)
    await idp.nextUser({ id: 'sub-alice', username: 'alice', name: 'Alice A', groups: ['ops'] })
    await w.page.goto(served.url)
    const button = w.page.getByRole('link', { name: 'Sign in with Test IdP' })
    await button.waitFor()
    await shot(w.page, 'oidc-01-login')
    await button.click()
    await w.page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: 20_000 })
    expect(new URL(w.page.url()).origin).toBe(served.url)
    await expect(w.page.locator('.nav-user').textContent()).resolves.toContain('Alice A')
    // An operator: no Admin section of settings.
    expect(await w.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Identity', exact: true }).count()).toBe(0)
    await shot(w.page, 'oidc-02-signed-in')
    const users = (await adminApi('GET', '/api/users')).users
    expect(users.find((u: { username: string }) => u.username === 'alice')).toMatchObject({ source: 'oidc', roles: [{ name: 'operator' }] })
    expect({ dialogs: w.dialogs, errors: w.pageErrors }).toEqual({ dialogs: [], errors: [] })
    await w.context.close()
  }, 60_000)

  test('a user whose groups map to nothing comes back to the login page with the sentence', async () => {
    const w = await watchedContext(browser)
    await idp.nextUser({ id: 'sub-bob', username: 'bob', name: 'Bob B', groups: ['interns'] })
    await w.page.goto(served.url)
    await w.page.getByRole('link', { name: 'Sign in with Test IdP' }).click()
    await w.page.getByRole('alert').filter({ hasText: 'No Saltdeck role for this account' }).waitFor({ timeout: 20_000 })
    // Still the login page: the password form is there and no navigation.
    await w.page.getByLabel('Username').waitFor()
    expect(await w.page.getByRole('navigation', { name: 'Main' }).count()).toBe(0)
    await shot(w.page, 'oidc-03-no-role')
    // The admin signs in with the password from this page and lands on the overview, not on #/login.
    await w.page.getByLabel('Username').fill('admin')
    await w.page.getByLabel('Password').fill(ADMIN_PW)
    await w.page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await w.page.getByRole('navigation', { name: 'Main' }).waitFor()
    expect(new URL(w.page.url()).hash).toBe('#/')
    // Identity: the callback URL to register, and Test reads the real issuer.
    await w.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Identity', exact: true }).click()
    await expect(w.page.locator('#oidc-callback').textContent()).resolves.toBe(`${served.url}/api/auth/oidc/callback`)
    const panel = w.page.getByRole('region', { name: 'OpenID Connect' })
    await panel.getByRole('button', { name: 'Test' }).click()
    await panel.getByText("The issuer's discovery document names its authorization, token and key endpoints").waitFor()
    await expect(panel.locator('.test-result').textContent()).resolves.toContain('Works')
    await shot(w.page, 'oidc-04-identity')
    expect({ dialogs: w.dialogs, errors: w.pageErrors }).toEqual({ dialogs: [], errors: [] })
    await w.context.close()
  }, 60_000)
})
