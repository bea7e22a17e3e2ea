#!/usr/bin/env bun
/**
 * Time until the overview page is interactive, in headless chromium, against a seeded fleet-scale database.
 *
 *   bun bench/overview.ts --data-dir bench/data/overview50k [--runs 9] [--binary PATH]
 *
 * "Interactive" here means: the four count cards (minions online, offline, keys pending, runs failing) show
 * numbers, the heartbeat line ("Last activity …") is rendered and the recent-events list has its rows (or says it
 * has none). It is measured in the page, from navigation start (performance.timeOrigin) to the first animation
 * frame where all of that holds, so it includes the HTML, the JS/CSS, the session check and every API call the
 * overview makes. Each run uses a fresh browser context (empty cache, session cookie from an API login made
 * beforehand), like a person opening the dashboard in a new browser. The binary (built into bench/data/bin/ without
 * --binary) serves DIR; the admin password is DIR's bench-info.json admin_password, else SALTDECK_ADMIN_PASSWORD,
 * else bench-admin-pw (what bench/seed.ts sets). Prints each run with its slowest API call, then the median.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { parseFlags } from '../src/cli'
import { median, r1, releaseBinary, runBinary } from './binary'

const F = parseFlags(process.argv.slice(2))
const DATA_DIR = resolve(F['data-dir'] ?? 'bench/data/overview50k')
const RUNS = Number(F.runs ?? 9)
if (!existsSync(join(DATA_DIR, 'saltdeck.db'))) throw new Error(`no saltdeck.db in ${DATA_DIR}: seed one with bench/seed.ts`)
const info = existsSync(join(DATA_DIR, 'bench-info.json')) ? JSON.parse(readFileSync(join(DATA_DIR, 'bench-info.json'), 'utf8')) : {}
const PASSWORD: string = info.admin_password ?? process.env.SALTDECK_ADMIN_PASSWORD ?? 'bench-admin-pw'

const bin = await releaseBinary(F.binary)
const tStart = performance.now()
const srv = await runBinary(bin, DATA_DIR, { SALTDECK_ADMIN_PASSWORD: PASSWORD }, 600_000)
console.log(`binary up on ${DATA_DIR} in ${Math.round(performance.now() - tStart)} ms`)

/** Run in the page at every animation frame; the DOM is reached through globalThis so the server's tsc needs no DOM types. */
function interactive(): number | false {
  const doc = (globalThis as any).document
  const cards: any[] = [...doc.querySelectorAll('section[aria-labelledby="ov-counts"] .card .n')]
  const recent = doc.querySelector('section[aria-labelledby="ov-activity"]')
  const ready = cards.length === 4 && cards.every((c) => /\d/.test(c.textContent || '')) && recent &&
    recent.querySelector('.heartbeat') && (recent.querySelector('ul.events li') || /No recent events/.test(recent.textContent || ''))
  return ready ? performance.now() : false
}
const API_TIMES = `performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.startsWith('/api/'))
  .map((e) => ({ path: new URL(e.name).pathname + new URL(e.name).search, start: Math.round(e.startTime), ms: Math.round(e.duration) }))`

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
try {
  const fleet = await (async () => {
    const ctx = await browser.newContext()
    const login = await ctx.request.post(`${srv.url}/api/auth/login`, { data: { username: 'admin', password: PASSWORD } })
    if (!login.ok()) throw new Error(`login: ${login.status()} ${await login.text()}`)
    const get = async (p: string) => (await (await ctx.request.get(`${srv.url}${p}`)).json()) as { total: number }
    const out = { minions: (await get('/api/minions?limit=1')).total, events: (await get('/api/activity?limit=1')).total }
    await ctx.close()
    return out
  })()
  console.log(`fleet: ${fleet.minions} minions, ${fleet.events} activity events`)

  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await ctx.request.post(`${srv.url}/api/auth/login`, { data: { username: 'admin', password: PASSWORD } })
    const page = await ctx.newPage()
    await page.goto(`${srv.url}/#/`, { waitUntil: 'commit' })
    const ms = (await (await page.waitForFunction(interactive, null, { polling: 'raf', timeout: 60_000 })).jsonValue()) as number
    const api = (await page.evaluate(API_TIMES)) as { path: string; start: number; ms: number }[]
    const slowest = api.reduce((a, b) => (b.ms > a.ms ? b : a), { path: '-', start: 0, ms: 0 })
    const nav = (await page.evaluate(`(() => { const n = performance.getEntriesByType('navigation')[0]; return { dcl: Math.round(n.domContentLoadedEventEnd), load: Math.round(n.loadEventEnd) } })()`)) as { dcl: number; load: number }
    times.push(ms)
    console.log(`run ${String(i + 1).padStart(2)}: interactive ${r1(ms)} ms (DOMContentLoaded ${nav.dcl} ms, ${api.length} API calls, slowest ${slowest.path} ${slowest.ms} ms)`)
    if (i === 0) for (const a of api) console.log(`        ${String(a.start).padStart(5)} ms +${String(a.ms).padStart(4)} ms  ${a.path}`)
    await ctx.close()
  }
  const sorted = [...times].sort((a, b) => a - b)
  console.log(JSON.stringify({ data_dir: DATA_DIR, ...fleet, runs: RUNS, median_ms: r1(median(times)), min_ms: r1(sorted[0]!), max_ms: r1(sorted.at(-1)!), first_ms: r1(times[0]!), target_ms: 1000 }))
} finally {
  await browser.close()
  await srv.stop()
}
