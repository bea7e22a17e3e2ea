// The dashboard in Debian's chromium against the compiled binary and the fake salt-api (issue 4, item 3).
// The tests share one browser session and run in order: each step starts where the previous one left the fleet.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { HOSTILE_ID, HOSTILE_PKG, PENDING_ID, SHOT_DIR, System, launchChromium, shot, until, watchedContext, type Browser, type Page } from './harness'

const NEW_PASSWORD = 'browser-test-pw-2'
let sys: System
let browser: Browser
let w: Awaited<ReturnType<typeof watchedContext>>
let page: Page

beforeAll(async () => {
  console.log(`screenshots: ${SHOT_DIR}`)
  ;[sys, browser] = await Promise.all([new System().start(), launchChromium()])
  w = await watchedContext(browser)
  page = w.page
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await sys?.stop()
})

/** Opens a dashboard route through the side navigation, as a person would. */
async function nav(label: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click()
  await page.getByRole('heading', { level: 1 }).waitFor()
}

describe('dashboard', () => {
  test('log in with the initial password and change it', async () => {
    await page.goto(sys.url)
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill(sys.initialPassword())
    await shot(page, '01-login')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor()
    await page.getByLabel('Current password').fill(sys.initialPassword())
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD)
    await page.getByLabel('New password again').fill(NEW_PASSWORD)
    await shot(page, '02-change-password')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    // The old password is gone for good.
    const old = await fetch(`${sys.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: sys.initialPassword() }) })
    expect(old.status).toBe(401)
  })

  test('the fleet is seeded through salt', async () => {
    await sys.login(NEW_PASSWORD)
    await sys.seed()
    expect((await sys.api('GET', '/api/minions')).total).toBe(6)
  }, 60_000)
})
