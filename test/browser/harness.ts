/**
 * Browser test harness: builds the release binary once, runs it on an empty data dir against the fake salt-api,
 * seeds a small fleet through salt (keys, grains, presence, state runs on the event stream, package inventory), and
 * drives Debian's chromium through playwright-core.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { FakeSalt, newJid, type FakeMinion } from '../helpers/fake-salt'
import { startServe, type Served } from '../helpers/serve'
import { until, type Patience } from '../helpers/until'

/** The minion id that must render as text everywhere (issue 4, item 3). */
export const HOSTILE_ID = '<img src=x onerror=alert(1)>'
/** A package name with markup, shipped by the hostile minion: inventory rows are minion data too. */
export const HOSTILE_PKG = '<svg/onload=alert(2)>'
/** A state id with markup in db-01's failing run (issue 11): state data is minion data too. */
export const HOSTILE_STATE = '<img src=x onerror=alert(3)>'
/** That state's comment, markup as well. */
export const HOSTILE_COMMENT = '<script>alert(4)</script><b>not bold</b>'
/** db-01's state ids in Salt's run order (its failing run adds HOSTILE_STATE last). */
export const DB_STATES = ['postgresql-pkg', 'pg_hba', 'postgresql-service']
/** The key left pending for the accept test. */
export const PENDING_ID = 'new-01'

const ROOT = resolve(import.meta.dir, '..', '..')
/** Where screenshots go (git-ignored); SALTDECK_SCREENSHOTS moves them. */
export const SHOT_DIR = resolve(process.env.SALTDECK_SCREENSHOTS ?? join(ROOT, 'test', 'browser', 'screenshots'))

/** How long the browser tests wait for the binary, salt and the page (`until`): a separate process and a real browser. */
export const PATIENT: Patience = { ms: 10_000, every: 50 }

/** Debian's chromium (SALTDECK_CHROMIUM points elsewhere). */
export const CHROMIUM = process.env.SALTDECK_CHROMIUM ?? '/usr/bin/chromium'

/** Chromium as issue 4 prescribes it: Debian's package, headless, no sandbox (CI runs as root), nothing phoning home. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/** Builds dist-like `saltdeck` into `dir` with build.ts (dashboard bundle + bun build --compile); returns its path. */
export async function buildBinary(dir: string): Promise<string> {
  const out = join(dir, 'saltdeck')
  const p = Bun.spawn(['bun', 'build.ts', out], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()])
  if (code !== 0) throw new Error(`bun build.ts failed (${code}):\n${stdout}\n${stderr}`)
  return out
}

/** A small fake fleet: three Debian minions, one offline, the hostile id, and one pending key. */
export function fakeFleet(): FakeSalt {
  const salt = new FakeSalt().start()
  salt.addMinions(['web-01', 'web-02', 'db-01', 'cache-01'])
  salt.addMinions([HOSTILE_ID], { pkgs: { bash: ['5.2.15-2+b2'], [HOSTILE_PKG]: ['1.0'] } })
  salt.addMinions([PENDING_ID], { key: 'pending' })
  for (const id of ['web-01', 'web-02']) salt.minions.get(id)!.pkgs = { ...salt.minions.get(id)!.pkgs, nginx: ['1.22.1-9'], 'nginx-common': ['1.22.1-9'] }
  salt.minions.get('web-02')!.pkgs.nginx = ['1.22.1-9+deb12u1']
  // web-01 holds libssl3, built from the source package openssl: records for openssl reach it once the source is learned.
  salt.minions.get('web-01')!.pkgs.libssl3 = ['3.0.11-1~deb12u2']
  salt.minions.get('web-01')!.sources = { libssl3: 'openssl' }
  salt.minions.get('db-01')!.pkgs = { ...salt.minions.get('db-01')!.pkgs, 'postgresql-15': ['15.8-0+deb12u1'] }
  salt.minions.get('cache-01')!.online = false
  // A grain only db-01 has, for the grain search of the Minions page.
  salt.minions.get('db-01')!.grains.role = 'database'
  return salt
}

/** One running test system: fake salt, the binary on an empty data dir, and a seeding client. */
export class System {
  root = mkdtempSync(join(tmpdir(), 'saltdeck-browser-'))
  dataDir = join(this.root, 'data')
  salt!: FakeSalt
  served!: Served
  private cookie = ''

  get url() {
    return this.served.url
  }

  /** Builds the binary and starts it, empty data dir, salt connection from the environment. */
  async start() {
    const bin = await buildBinary(this.root)
    this.salt = fakeFleet()
    this.served = await startServe(this.dataDir, {
      SALTDECK_SALT_URL: this.salt.url, SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_SALT_PASSWORD: 's3cr3t', SALTDECK_SALT_EAUTH: 'sharedsecret',
      // Several fake minions share 127.0.0.1; manage.status pings each one (README, presence).
      SALTDECK_PRESENCE_METHOD: 'status',
      // Alert notifications go out a second after the change rather than thirty.
      SALTDECK_ALERT_GROUP_SECONDS: '1',
      SALTDECK_ARGON2_MEMORY_KIB: '1024',
    }, [bin])
    return this
  }

  /** The random first password the binary wrote into its data dir. */
  initialPassword() {
    return readFileSync(join(this.dataDir, 'initial-admin-password'), 'utf8').trim()
  }

  /** Logs the seeding client in (after the browser changed the first password). */
  async login(password: string) {
    const r = await fetch(`${this.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) })
    if (r.status !== 200) throw new Error(`login: ${r.status} ${await r.text()}`)
    this.cookie = r.headers.get('set-cookie')!.split(';')[0]!
  }

  /** Calls the API as the seeding client; throws on any non-2xx answer. */
  async api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await fetch(this.url + path, {
      method, headers: { cookie: this.cookie, ...(body !== undefined || method !== 'GET' ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await r.text()
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`)
    return (text ? JSON.parse(text) : undefined) as T
  }

  /**
   * Fills the fleet through salt as production would: the event stream on, keys/presence/grains pollers run now,
   * four state runs of web-01 (one per status) and one per other minion published on /events, an inventory refresh.
   */
  async seed() {
    await this.api('PUT', '/api/admin/settings/pollers', { event_stream_enabled: true })
    // Each poller is a background run; presence and grains need the minions the keys poller stores.
    await this.runPoller('keys')
    await until(async () => (await this.api('GET', '/api/keys')).pending.includes(PENDING_ID), 'keys stored', PATIENT)
    await this.runPoller('presence')
    await until(async () => (await this.api('GET', '/api/minions?status=online')).total === 4, 'presence stored', PATIENT)
    await this.runPoller('grains')
    await until(async () => (await this.api('GET', '/api/minions/web-01')).grains?.os === 'Debian', 'grains stored', PATIENT)
    await until(() => this.salt.streamCount > 0, 'event stream connected', PATIENT)

    const now = Date.now()
    // db-01's runs with state detail, before the runs below (its failing run is the one of the list): a dry run, then a good run.
    this.publishRun('db-01', 'changed', now - 12 * 60_000, { ret: dbReturn('dry'), args: ['test=True'] })
    this.publishRun('db-01', 'healthy', now - 10 * 60_000, { ret: dbReturn('good') })
    const runs: [string, RunKind][] = [
      ['web-01', 'healthy'], ['web-01', 'changed'], ['web-01', 'unhealthy'], ['web-01', 'blocked'],
      ['web-02', 'changed'], ['db-01', 'unhealthy'], [HOSTILE_ID, 'healthy'],
    ]
    runs.forEach(([id, kind], i) => this.publishRun(id, kind, now - (runs.length - i) * 60_000, id === 'db-01' ? { ret: dbReturn('bad') } : {}))
    this.salt.publish(`salt/minion/${HOSTILE_ID}/start`, { id: HOSTILE_ID, cmd: '_minion_event', data: 'Minion started' })
    await until(async () => (await this.api('GET', '/api/minions/web-01/runs')).total === 4, 'runs stored', PATIENT)
    await until(async () => (await this.api('GET', `/api/minions/${encodeURIComponent(HOSTILE_ID)}/runs`)).total === 1, 'hostile run stored', PATIENT)
    await until(async () => (await this.api('GET', '/api/minions/db-01/runs')).total === 3, "db-01's runs stored", PATIENT)

    await this.api('POST', '/api/inventory/refresh', {})
    await until(async () => {
      const s = await this.api('GET', '/api/inventory/status')
      return !s.running && s.last?.finished_at !== undefined
    }, 'inventory refresh', PATIENT)
    await until(async () => (await this.api('GET', '/api/inventory/packages?q=nginx')).total === 2, 'packages stored', PATIENT)
  }

  /** POST run-now; a 409 (already running from the start-up tick) is as good. */
  private async runPoller(name: string) {
    const r = await fetch(`${this.url}/api/admin/pollers/${name}/run`, { method: 'POST', headers: { cookie: this.cookie, 'content-type': 'application/json' } })
    if (r.status !== 202 && r.status !== 409) throw new Error(`run ${name}: ${r.status} ${await r.text()}`)
  }

  /**
   * Publishes a state.apply job (new + one return) on the fake's /events, shaped to give the run `kind`, or with the
   * return and arguments given (`['test=True']` makes it a dry run); returns its jid.
   */
  publishRun(minionId: string, kind: RunKind, at: number, o: { ret?: unknown; args?: unknown[] } = {}) {
    const jid = newJid(at)
    const ret = o.ret ?? stateReturn(kind)
    const args = o.args ?? []
    const stampAt = saltStamp(at)
    this.salt.publish(`salt/job/${jid}/new`, { jid, tgt_type: 'glob', tgt: minionId, user: 'root', fun: 'state.apply', arg: args, minions: [minionId], missing: [], _stamp: saltStamp(at - 5000) })
    const retcode = kind === 'healthy' || kind === 'changed' ? 0 : kind === 'blocked' ? 1 : 2
    this.salt.publish(`salt/job/${jid}/ret/${minionId}`, { cmd: '_return', id: minionId, success: retcode === 0, return: ret, retcode, jid, fun: 'state.apply', fun_args: args, _stamp: stampAt })
    return jid
  }

  /** Stops the binary and the fake; keeps nothing but the screenshots. */
  async stop() {
    if (this.served) await this.served.stop()
    this.salt?.stop()
    rmSync(this.root, { recursive: true, force: true })
  }
}

/** The four run statuses of contract §7. */
export type RunKind = 'healthy' | 'changed' | 'unhealthy' | 'blocked'

/** A state return that Saltdeck classifies as `kind`. */
function stateReturn(kind: RunKind): unknown {
  if (kind === 'blocked') return ['The function "state.apply" is running as PID 4242 and was started at 2026, Nov 21 09:00:00.000000 with jid 20261121090000000000']
  const state = (id: string, result: boolean, changes: Record<string, unknown>) => ({
    [`pkg_|-${id}_|-${id}_|-installed`]: { name: id, result, comment: result ? 'All specified packages are already installed' : 'Problem encountered installing package(s)', changes, duration: 12.5, __run_num__: 0 },
  })
  if (kind === 'healthy') return state('nginx', true, {})
  if (kind === 'changed') return state('nginx', true, { nginx: { old: '1.22.1-9', new: '1.22.1-9+deb12u1' } })
  return { ...state('nginx', true, {}), ...state('postgresql-15', false, {}) }
}

/** The unified diff file.managed reports for pg_hba.conf: long enough to be folded. */
export const PG_HBA_DIFF = ['--- ', '+++ ', '@@ -1,6 +1,8 @@', ' # TYPE  DATABASE  USER  ADDRESS  METHOD', ' local   all       postgres          peer',
  ' local   all       all               peer', '-host    all       all   127.0.0.1/32  md5', '+host    all       all   127.0.0.1/32  scram-sha-256',
  '+host    all       all   10.0.0.0/8    scram-sha-256', ' host    all       all   ::1/128       scram-sha-256', '+# managed by salt'].join('\n')

/**
 * db-01's state returns with Salt's per-state fields (`__id__`, `__sls__`, `__run_num__`), listed out of run order:
 * `good` all succeed; `dry` (test=True) would change pg_hba.conf; `bad` changes it, fails the service and HOSTILE_STATE.
 */
function dbReturn(kind: 'good' | 'dry' | 'bad'): Record<string, unknown> {
  const st = (key: string, id: string, sls: string, order: number, result: boolean | null, comment: string, changes: Record<string, unknown> = {}) =>
    ({ [key]: { __id__: id, __sls__: sls, __run_num__: order, name: key.split('_|-')[2], result, comment, changes, duration: 10 + order, start_time: '09:00:00.000000' } })
  const hba = '/etc/postgresql/15/main/pg_hba.conf'
  const out = {
    ...st('service_|-postgresql-service_|-postgresql_|-running', 'postgresql-service', 'db.server', 2,
      kind === 'bad' ? false : true, kind === 'bad' ? 'Service postgresql failed to start\nJob for postgresql.service failed because the control process exited with error code.' : 'The service postgresql is already running'),
    ...st(`file_|-pg_hba_|-${hba}_|-managed`, 'pg_hba', 'db.config', 1, kind === 'dry' ? null : true,
      kind === 'good' ? `File ${hba} is in the correct state` : kind === 'dry' ? `The file ${hba} is set to be changed` : `File ${hba} updated`,
      kind === 'good' ? {} : { diff: PG_HBA_DIFF, mode: '0640' }),
    ...st('pkg_|-postgresql-pkg_|-postgresql-15_|-installed', 'postgresql-pkg', 'db.server', 0, true, 'All specified packages are already installed'),
  }
  if (kind === 'bad') Object.assign(out, st(`cmd_|-${HOSTILE_STATE}_|-echo hi_|-run`, HOSTILE_STATE, 'db.hostile', 3, false, HOSTILE_COMMENT))
  return out
}

/** Salt's `_stamp` format (UTC, microseconds, no zone). */
export function saltStamp(ms: number) {
  return new Date(ms).toISOString().replace('Z', '000')
}

/**
 * Records, from before any page script runs, every sign that minion data became markup: an inserted element with an
 * on* attribute (Preact never writes those: it adds listeners), an <img>, <iframe> or <object>, or a <script> other than the app's,
 * and every CSP violation (the CSP blocks an injected handler, so a violation report is the trace an injection leaves
 * even when nothing runs; a style attribute would also show here, which the dashboard rules forbid).
 */
const WATCH_SCRIPT = `(() => {
  const seen = (window.__hostile = [])
  const check = (n) => {
    if (!(n instanceof Element)) return
    for (const el of [n, ...n.querySelectorAll('*')]) {
      const tag = el.tagName.toLowerCase()
      if (tag === 'img' || tag === 'iframe' || tag === 'object' || (tag === 'script' && !/\\/assets\\/app\\.js$/.test(el.getAttribute('src') || '')))
        seen.push('element ' + el.outerHTML.slice(0, 120))
      for (const a of el.getAttributeNames()) if (/^on/i.test(a)) seen.push('attribute ' + a + ' on <' + tag + '>')
    }
  }
  new MutationObserver((ms) => { for (const m of ms) m.addedNodes.forEach(check) }).observe(document, { childList: true, subtree: true })
  document.addEventListener('securitypolicyviolation', (e) => seen.push('csp ' + e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '')))
})()`

/** A browser context with the markup watch and a dialog recorder; `problems()` lists everything seen so far. */
export async function watchedContext(browser: Browser, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport })
  await context.addInitScript({ content: WATCH_SCRIPT })
  const dialogs: string[] = []
  const pageErrors: string[] = []
  const watch = (page: Page) => {
    page.on('dialog', (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`)
      void d.dismiss()
    })
    page.on('pageerror', (e) => pageErrors.push(e.message))
  }
  context.on('page', watch)
  const page = await context.newPage()
  return {
    context, page, dialogs, pageErrors,
    /** Markup the watch script saw in the current document; `clear` empties the record so a later failure names its own page. */
    async hostile(clear = false): Promise<string[]> {
      return page.evaluate((c) => {
        const seen = (globalThis as unknown as { __hostile?: string[] }).__hostile ?? []
        return c ? seen.splice(0) : [...seen]
      }, clear)
    },
  }
}

/** Full-page screenshot into SHOT_DIR/<name>.png. */
export async function shot(page: Page, name: string) {
  mkdirSync(SHOT_DIR, { recursive: true })
  const path = join(SHOT_DIR, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

export type { Browser, BrowserContext, Page }
