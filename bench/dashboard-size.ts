#!/usr/bin/env bun
/**
 * The dashboard's weight on first load: every asset's bytes over the wire with gzip, as the binary serves them.
 *
 *   bun bench/dashboard-size.ts [--binary PATH]
 *
 * Starts the release binary (built into bench/data/bin/ without --binary) on a fresh data directory, then
 * (1) fetches /, /assets/app.js and /assets/app.css over raw HTTP with and without `Accept-Encoding: gzip` and
 *     reports the body sizes and the header bytes, and
 * (2) loads the dashboard in headless chromium with an empty cache twice, logged out (the login page) and logged in
 *     (the overview), and sums what DevTools calls "transferred" (Network.loadingFinished encodedDataLength: headers
 *     plus the compressed body) per request, assets and API calls apart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { parseFlags } from '../src/cli'
import { releaseBinary, runBinary } from './binary'

const F = parseFlags(process.argv.slice(2))
const bin = await releaseBinary(F.binary)
const dir = mkdtempSync(join(tmpdir(), 'saltdeck-size-'))
const PASSWORD = 'bench-admin-pw'
const srv = await runBinary(bin, join(dir, 'data'), { SALTDECK_ADMIN_PASSWORD: PASSWORD })

/** One raw GET: body bytes as sent, and the size of the status line plus headers. */
function raw(path: string, gzip: boolean): Promise<{ body: number; headers: number; encoding: string }> {
  return new Promise((done, fail) => {
    const req = request(`${srv.url}${path}`, { headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
      let body = 0
      res.on('data', (c: Buffer) => (body += c.length))
      res.on('end', () => {
        let headers = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`.length + 2
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`.length
        done({ body, headers, encoding: String(res.headers['content-encoding'] ?? 'identity') })
      })
    })
    req.on('error', fail)
    req.end()
  })
}

try {
  const files = ['/', '/assets/app.js', '/assets/app.css']
  const rows: { file: string; identity_bytes: number; gzip_bytes: number; gzip_with_headers: number; encoding: string }[] = []
  for (const f of files) {
    const [plain, gz] = await Promise.all([raw(f, false), raw(f, true)])
    rows.push({ file: f, identity_bytes: plain.body, gzip_bytes: gz.body, gzip_with_headers: gz.body + gz.headers, encoding: gz.encoding })
  }
  console.table(rows)
  const sum = (k: 'identity_bytes' | 'gzip_bytes' | 'gzip_with_headers') => rows.reduce((a, r) => a + r[k], 0)
  console.log(`assets: ${sum('identity_bytes')} bytes uncompressed, ${sum('gzip_bytes')} bytes gzip bodies, ${sum('gzip_with_headers')} bytes with response headers`)

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const transferred = async (login: boolean) => {
    const context = await browser.newContext()
    if (login) await context.request.post(`${srv.url}/api/auth/login`, { data: { username: 'admin', password: PASSWORD } })
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true })
    const urls = new Map<string, string>()
    const sizes: { url: string; bytes: number }[] = []
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url))
    cdp.on('Network.loadingFinished', (e) => sizes.push({ url: urls.get(e.requestId) ?? '?', bytes: e.encodedDataLength }))
    await page.goto(`${srv.url}/#/`, { waitUntil: 'networkidle' })
    await context.close()
    const path = (u: string) => new URL(u).pathname + new URL(u).search
    const assets = sizes.filter((s) => !path(s.url).startsWith('/api/'))
    const apis = sizes.filter((s) => path(s.url).startsWith('/api/'))
    const total = (xs: typeof sizes) => xs.reduce((a, s) => a + s.bytes, 0)
    return { assets: assets.map((s) => ({ path: path(s.url), bytes: s.bytes })), assets_total: total(assets), api_calls: apis.length, api_total: total(apis) }
  }
  const out = await transferred(false)
  const inn = await transferred(true)
  await browser.close()
  console.log('chromium, empty cache, logged out (login page):', JSON.stringify(out))
  console.log('chromium, empty cache, logged in (overview):   ', JSON.stringify(inn))
  console.log(JSON.stringify({ assets_gzip_bodies: sum('gzip_bytes'), assets_with_headers: sum('gzip_with_headers'), chromium_login_page: out.assets_total, chromium_overview_assets: inn.assets_total, chromium_overview_api: inn.api_total, target: 250_000 }))
} finally {
  await srv.stop()
  rmSync(dir, { recursive: true, force: true })
}
