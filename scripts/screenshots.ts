/**
 * `bun run screenshots`: the README's pictures, taken from `saltdeck demo` (the seeded fleet) in Debian's chromium:
 * the overview, a failing run's page and the alerts page, at 1440 px and at 390 px (a phone), into docs/.
 * SALTDECK_CHROMIUM points at another chromium.
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { spawn } from 'bun'
import { chromium, type Page } from 'playwright-core'

const ROOT = resolve(import.meta.dir, '..')
const DOCS = join(ROOT, 'docs')
const WIDTHS = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } }

/** Starts the demo and reads its address and login from what it prints. */
async function startDemo() {
  const proc = spawn(['bun', 'run', 'src/main.ts', 'demo', '--host', '127.0.0.1', '--port', '0'], { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' })
  let out = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const c of proc.stdout as ReadableStream<Uint8Array>) out += decoder.decode(c)
  })()
  const deadline = Date.now() + 120_000
  while (!/data {3}\S+/.test(out)) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`saltdeck demo did not start:\n${out}`)
    await Bun.sleep(100)
  }
  return { proc, url: /open {3}(http:\/\/\S+?)\/?\s/.exec(out)![1]!, password: /login {2}admin \/ (\S+)/.exec(out)![1]! }
}

/** Waits until no region says "Loading…". */
async function loaded(page: Page) {
  await page.locator('h1#page-title').waitFor()
  // The page's CSP refuses a string to evaluate; globalThis keeps DOM types out of tsc.
  await page.waitForFunction(() => !(globalThis as any).document.body.innerText.includes('Loading…'), undefined, { timeout: 20_000 })
  await page.waitForTimeout(300)
}

const demo = await startDemo()
const browser = await chromium.launch({
  executablePath: process.env.SALTDECK_CHROMIUM ?? '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
try {
  // A failing run: the newest run of the first minion whose last run failed.
  const login = await fetch(`${demo.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: demo.password }) })
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const get = async (path: string) => (await (await fetch(demo.url + path, { headers: { cookie } })).json()) as any
  const failing: string = (await get('/api/minions?status=unhealthy&q=web-*&limit=1')).minions[0].id
  const run: string = (await get(`/api/minions/${failing}/runs?limit=1&test=false`)).runs[0].jid
  mkdirSync(DOCS, { recursive: true })
  for (const [kind, viewport] of Object.entries(WIDTHS)) {
    const context = await browser.newContext({ viewport, deviceScaleFactor: 1 })
    const page = await context.newPage()
    await page.goto(demo.url)
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill(demo.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    // The sign-in form has a page title too: the navigation says the dashboard is there.
    await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: 30_000 })
    const suffix = kind === 'phone' ? '-phone' : ''
    for (const [name, hash] of [['overview', '#/'], ['run-page', `#/minions/${failing}/runs/${run}`], ['alerts', '#/alerts']] as const) {
      await page.goto(`${demo.url}/${hash}`)
      await loaded(page)
      const path = join(DOCS, `${name}${suffix}.png`)
      await page.screenshot({ path, fullPage: true })
      console.log(path)
    }
    await context.close()
  }
} finally {
  await browser.close()
  demo.proc.kill('SIGTERM')
  await demo.proc.exited
}
