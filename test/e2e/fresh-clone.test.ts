// A fresh clone serves the dashboard with `bun run src/main.ts serve`, no generate step first (issue 8): the
// repository's files alone (no src/dashboard/generated/, no build output) are copied to an empty directory and served.
import { afterAll, expect, test } from 'bun:test'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { startServe } from '../helpers/serve'

const repo = join(import.meta.dir, '..', '..')
const root = mkdtempSync(join(tmpdir(), 'saltdeck-fresh-'))
const clone = join(root, 'clone')
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Copies what a clone holds: tracked files and new ones not ignored (so uncommitted work is tested too). */
function copyRepository() {
  const ls = Bun.spawnSync(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo })
  if (ls.exitCode !== 0) throw new Error(`git ls-files failed: ${ls.stderr}`)
  for (const f of ls.stdout.toString().split('\0')) {
    if (!f || !existsSync(join(repo, f))) continue
    mkdirSync(dirname(join(clone, f)), { recursive: true })
    cpSync(join(repo, f), join(clone, f))
  }
  symlinkSync(join(repo, 'node_modules'), join(clone, 'node_modules'))
}

/** `bun run src/main.ts serve` in the copy. */
const serveClone = () => startServe(join(root, 'data'), { SALTDECK_ARGON2_MEMORY_KIB: '1024' }, ['bun', 'run', 'src/main.ts'], { cwd: clone })

test('bun run src/main.ts serve on a fresh clone serves the dashboard and its assets', async () => {
  copyRepository()
  expect(existsSync(join(clone, 'src/dashboard/generated'))).toBe(false)
  const served = await serveClone()
  try {
    const html = await fetch(`${served.url}/`)
    expect(html.status).toBe(200)
    expect(await html.text()).toContain('<script type="module" src="/assets/app.js">')
    const js = await fetch(`${served.url}/assets/app.js`, { headers: { 'accept-encoding': 'gzip' } })
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toStartWith('text/javascript')
    const body = await js.text()
    // A browser bundle: Preact is inside it, not imported by a bare specifier the browser could not resolve.
    expect(body.length).toBeGreaterThan(5000)
    expect(body).not.toMatch(/from\s*["']preact/)
    const css = await fetch(`${served.url}/assets/app.css`)
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toStartWith('text/css')
  } finally {
    expect(await served.stop()).toBe(0)
  }
}, 30_000)

test('from source a stale generated bundle is ignored: the dashboard is bundled from src/dashboard', async () => {
  // Left behind by an earlier `bun run build`: only the executable embeds it.
  mkdirSync(join(clone, 'src/dashboard/generated'), { recursive: true })
  writeFileSync(join(clone, 'src/dashboard/generated/app.js'), 'stale()')
  const served = await serveClone()
  try {
    expect((await (await fetch(`${served.url}/assets/app.js`)).text()).length).toBeGreaterThan(5000)
  } finally {
    expect(await served.stop()).toBe(0)
  }
}, 30_000)
