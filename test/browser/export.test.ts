// The "Export CSV" links (contract §16 "Export") in Debian's chromium against the compiled binary and the fake salt-api:
// each carries the page's filters and format=csv without the pager's limit/offset, and following it with the
// browser's session answers the filtered list as a CSV attachment.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { missingTool } from '../helpers/tools'
import { parseCsv } from '../helpers/csv'
import { CHROMIUM, System, launchChromium, watchedContext, type Browser, type Page } from './harness'

const noBrowser = missingTool(CHROMIUM, 'apt-get install chromium', 'browser tests')
const NEW_PASSWORD = 'export-test-pw-2'

let sys: System
let browser: Browser
let page: Page

/** The Export link's target on the page now shown, as an absolute URL. */
async function exportUrl(): Promise<URL> {
  const link = page.getByRole('link', { name: 'Export CSV' })
  await link.waitFor()
  return new URL((await link.getAttribute('href'))!, sys.url)
}

/** Follows a link the way the browser's download does: a GET with the page's session cookie. */
async function follow(url: URL) {
  const r = await page.request.get(url.toString())
  expect(r.status()).toBe(200)
  expect(r.headers()['content-type']).toBe('text/csv; charset=utf-8')
  expect(r.headers()['content-disposition']).toMatch(/^attachment; /)
  const rows = parseCsv(await r.text())
  return { header: rows[0]!, rows: rows.slice(1) }
}

describe.skipIf(noBrowser)('export links', () => {
  beforeAll(async () => {
    ;[sys, browser] = await Promise.all([new System().start(), launchChromium()])
    page = (await watchedContext(browser)).page
    await page.goto(sys.url)
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill(sys.initialPassword())
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByLabel('Current password').fill(sys.initialPassword())
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD)
    await page.getByLabel('New password again').fill(NEW_PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    await sys.login(NEW_PASSWORD)
    await sys.seed()
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await sys?.stop()
  })

  test('Minions: the search and status filters, no paging, and the CSV holds just those minions', async () => {
    await page.goto(`${sys.url}/#/minions?q=web&status=online&offset=0`)
    const url = await exportUrl()
    expect(url.pathname).toBe('/api/minions')
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: 'web', status: 'online', format: 'csv' })
    const out = await follow(url)
    expect(out.header[0]).toBe('id')
    expect(out.rows.map((r) => r[0]).sort()).toEqual(['web-01', 'web-02'])
    // Changing the filter on the page changes the link.
    await page.locator('#minion-status').selectOption('offline')
    await page.waitForURL(/status=offline/)
    expect(Object.fromEntries((await exportUrl()).searchParams)).toEqual({ q: 'web', status: 'offline', format: 'csv' })
  })

  test("Audit log: the user and action filters; a minion's runs: the status filter", async () => {
    await page.goto(`${sys.url}/#/audit?action=auth.login&user=admin`)
    const audit = await exportUrl()
    expect(audit.pathname).toBe('/api/audit')
    expect(Object.fromEntries(audit.searchParams)).toEqual({ user: 'admin', action: 'auth.login', format: 'csv' })
    const rows = (await follow(audit)).rows
    expect(rows.length).toBeGreaterThan(0)
    expect(new Set(rows.map((r) => r[3]))).toEqual(new Set(['auth.login']))
    await page.goto(`${sys.url}/#/minions/web-01?run_status=unhealthy`)
    const runs = await exportUrl()
    expect(runs.pathname).toBe('/api/minions/web-01/runs')
    expect(Object.fromEntries(runs.searchParams)).toEqual({ status: 'unhealthy', format: 'csv' })
    const got = await follow(runs)
    expect(got.rows.length).toBe(1)
    expect(got.rows[0]![got.header.indexOf('status')]).toBe('unhealthy')
  })

  test('Jobs and Vulnerabilities carry their filters too', async () => {
    await page.goto(`${sys.url}/#/jobs?fun=state.apply&internal=1`)
    expect(Object.fromEntries((await exportUrl()).searchParams)).toEqual({ fun: 'state.apply', include_internal: 'true', format: 'csv' })
    await page.goto(`${sys.url}/#/vulns?severity=high&q=CVE`)
    const v = await exportUrl()
    expect(v.pathname).toBe('/api/vulns')
    expect(Object.fromEntries(v.searchParams)).toEqual({ q: 'CVE', severity: 'high', format: 'csv' })
    expect((await follow(v)).header[0]).toBe('id')
  })

  test("A package's version query carries op and version, and the CSV holds the minions below it", async () => {
    await page.goto(`${sys.url}/#/inventory/nginx?op=lt&version=${encodeURIComponent('1.22.1-9+deb12u1')}`)
    const url = await exportUrl()
    expect(url.pathname).toBe('/api/inventory/packages/nginx/minions')
    expect(Object.fromEntries(url.searchParams)).toEqual({ op: 'lt', version: '1.22.1-9+deb12u1', format: 'csv' })
    const out = await follow(url)
    expect(out.rows.map((r) => [r[0], r[2]])).toEqual([['web-01', '1.22.1-9']])
  })
})
