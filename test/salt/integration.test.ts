// Proves Saltdeck against a real salt-master + salt-api + three minions from PyPI (test/salt/bed.sh):
// keys and key events, a state.apply's three runs and job events, inventory counts, grains, a minion going offline.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { until, type Patience } from '../helpers/until'

const CI = process.env.CI === 'true'
/** Runs a bed.sh command; its duration goes to the log, so a slow master or minion shows in CI output. */
const bed = (...args: string[]) => bedWith({}, ...args)
/** bed.sh with these variables added to the environment. */
const bedWith = (vars: Record<string, string>, ...args: string[]) => {
  const t0 = Date.now()
  const r = Bun.spawnSync(['bash', 'test/salt/bed.sh', ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...vars } })
  if (args[0] !== 'install') console.log(`bed.sh ${args[0]}${args[2] ? ` ${args[2]}` : ''}: exit ${r.exitCode} after ${Date.now() - t0} ms`)
  return r
}
const install = bed('install')
// On a developer machine without python3/venv/pip (exit 3) the suite says why and skips; under CI=true bed.sh exits 1.
const unavailable = install.exitCode === 3 && !CI
if (unavailable) console.warn(`test/salt: SKIPPED — the Salt test bed cannot be installed here:\n${install.stderr.toString()}`)
else if (install.exitCode !== 0) throw new Error(`bed.sh install failed (exit ${install.exitCode}):\n${install.stderr.toString()}`)

const bedDir = mkdtempSync('/tmp/sdb-')
let env: Record<string, string> = {}
let srv: Served
let auth: Record<string, string> = {}
const VERSION = process.env.SALT_BED_VERSION ?? '3006.28'
/** Saltdeck's environment against the bed (the admin password is read at the first start only). */
const serveEnv = () => ({
  SALTDECK_ADMIN_PASSWORD: 'integration-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024', SALTDECK_PRESENCE_METHOD: 'status', SALTDECK_ALERT_GROUP_SECONDS: '1',
  SALTDECK_SALT_URL: env.SALT_URL!, SALTDECK_SALT_USERNAME: env.SALT_USER!, SALTDECK_SALT_PASSWORD: env.SALT_PASSWORD!, SALTDECK_SALT_EAUTH: env.SALT_EAUTH!,
})
/** Starts Saltdeck on the bed's data dir and logs in as admin. */
async function serve() {
  srv = await startServe(join(bedDir, 'saltdeck'), serveEnv())
  const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'integration-pw' }) })
  auth = { authorization: `Bearer ${login.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}`, 'content-type': 'application/json' }
}
/** The runs of a minion for one job, or null until stored. */
const runOf = async (minion: string, jid: string) => (await api('GET', `/api/minions/${minion}/runs?limit=200`)).body.runs.find((r: any) => r.jid === jid) ?? null
const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${srv.url}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: r.status, body: (await r.json().catch(() => null)) as any }
}
/** A real HTTP receiver for the alert webhook: every notification it gets, by id. */
const hooks: { id: string; status: string; rule: { kind: string }; alerts: { subject: string }[] }[] = []
const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (req) => (hooks.push((await req.json()) as (typeof hooks)[number]), new Response("ok")) })
/** How long `until` waits here: real daemons answer in seconds, not milliseconds. */
const BED: Patience = { ms: 60_000, every: 500 }
/** Seconds until web-01's demo-schedule (state.apply demo every 60 s, bed.sh) fires next, by the minion's clock. */
const nextScheduledRun = () => {
  const r = bed('salt', bedDir, 'web-01', 'schedule.show_next_fire_time', 'demo-schedule', '--out=json', '--static')
  const t = JSON.parse(r.stdout.toString())['web-01']?.next_fire_time as string | undefined
  if (!t) throw new Error(`schedule.show_next_fire_time: ${r.stdout}${r.stderr}`)
  return (new Date(t).getTime() - Date.now()) / 1000 // both local time: same host
}
/**
 * Waits until web-01's scheduled run is 15–50 s away: a state run that starts while another runs on the minion is
 * refused ("running as PID"), and queue=True answers twice (test/salt/README.md, "Scheduled job").
 */
const betweenScheduledRuns = () => until(async () => { const n = nextScheduledRun(); return n >= 15 && n <= 50 }, 'a gap between scheduled runs', { ms: 90_000, every: 1_000 })

beforeAll(async () => {
  if (unavailable) return
  const started = bed('start', bedDir)
  if (started.exitCode !== 0) throw new Error(`bed.sh start failed:\n${started.stdout}\n${started.stderr}`)
  env = Object.fromEntries(readFileSync(join(bedDir, 'bed.env'), 'utf8').trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]))
  await serve()
  const put = await api('PUT', '/api/admin/settings/pollers', {
    minion_state_keys_interval_seconds: 2, minion_state_presence_interval_seconds: 3, minion_state_grains_interval_seconds: 5,
    minion_state_initial_delay_seconds: 0, jobs_poll_interval_seconds: 5, event_stream_enabled: true,
  })
  expect(put.status).toBe(200)
}, 300_000)

afterAll(async () => {
  if (unavailable) return
  await srv?.stop()
  receiver.stop(true)
  bed('stop', bedDir)
  rmSync(bedDir, { recursive: true, force: true })
}, 60_000)

describe.skipIf(unavailable)(`real salt ${VERSION}`, () => {
  test('the connection test answers ok with three accepted minions', async () => {
    const r = await api('POST', '/api/admin/settings/test-salt-saved', {})
    expect(r.body).toMatchObject({ ok: true, minion_count: 3 })
  })

  test('keys appear with their fingerprints, and the first sync records no key events', async () => {
    const keys = await until(async () => {
      const k = (await api('GET', '/api/keys')).body
      return k.accepted.length === 3 ? k : null
    }, 'three accepted keys', BED)
    expect(keys).toMatchObject({ accepted: ['db-01', 'web-01', 'web-02'], pending: [], rejected: [], denied: [] })
    // wheel key.finger, read by the keys poller after the list: salt's sha256 fingerprint, 32 hex pairs, one per key.
    const fps = await until(async () => {
      const f = (await api('GET', '/api/keys')).body.fingerprints
      return Object.keys(f).length === 3 ? f : null
    }, 'three key fingerprints', BED)
    expect(Object.keys(fps).sort()).toEqual(['db-01', 'web-01', 'web-02'])
    for (const fp of Object.values(fps)) expect(fp).toMatch(/^([0-9a-f]{2}:){31}[0-9a-f]{2}$/)
    expect(new Set(Object.values(fps)).size).toBe(3)
    expect((await api('GET', '/api/minions/web-01')).body.key_fingerprint).toBe(fps['web-01'])
    // The first keys sync of a new install records the keys without a "key accepted" event each (contract §17).
    expect((await api('GET', '/api/activity?event_type=key.accept')).body.total).toBe(0)
  }, 90_000)

  test('grains reach the minion detail', async () => {
    const d = await until(async () => {
      const m = (await api('GET', '/api/minions/web-01')).body
      return m?.grains?.id === 'web-01' ? m : null
    }, 'grains of web-01', BED)
    expect(d.salt_version).toBe(env.SALT_BED_VERSION)
    expect(d.os).toBeTruthy()
    expect(d.grains.role).toBe('web')
  }, 90_000)

  test('a state.apply to all three gives three runs: changed, unhealthy, and the render error as a failed run', async () => {
    await until(async () => (await api('GET', '/api/admin/pollers')).body.event_stream.connected, 'the event stream connected', BED)
    await betweenScheduledRuns()
    const run = await api('POST', '/api/run', { tgt: '*', fun: 'state.apply' })
    expect(run.status).toBe(202)
    expect(run.body.minions.sort()).toEqual(['db-01', 'web-01', 'web-02'])
    const jid = run.body.jid as string
    const runs = await until(async () => {
      const all = await Promise.all(['web-01', 'db-01', 'web-02'].map(async (m) => (await api('GET', `/api/minions/${m}/runs`)).body.runs.find((r: any) => r.jid === jid)))
      return all.every(Boolean) ? all : null
    }, 'three runs', { ...BED, ms: 120_000 })
    const [web01, db01, web02] = runs
    expect(web01).toMatchObject({ fun: 'state.apply', status: 'changed', pass_count: 2, fail_count: 0, change_count: 1, total_count: 2, blocked: false })
    expect(db01).toMatchObject({ status: 'unhealthy', pass_count: 2, fail_count: 1, change_count: 1, total_count: 3 })
    expect(web02).toMatchObject({ status: 'unhealthy', pass_count: 0, change_count: 0, blocked: false })
    expect(web02.fail_count).toBeGreaterThanOrEqual(1)
    expect(web02.total_count).toBe(web02.fail_count)
    // `*` was expanded by the master and published as the list of the minions it matched (contract §14).
    const ev = (await api('GET', `/api/activity?jid=${jid}`)).body.events
    expect(ev.filter((e: any) => e.event_type === 'job.new')).toHaveLength(1)
    const rets = ev.filter((e: any) => e.event_type === 'job.ret')
    expect(rets.map((e: any) => e.minion_id).sort()).toEqual(['db-01', 'web-01', 'web-02'])
    expect(rets.find((e: any) => e.minion_id === 'db-01')).toMatchObject({ success: false, changed: true, summary: 'db-01 returned state.apply: 2 ok, 1 failed, 1 changed' })
    expect(rets.find((e: any) => e.minion_id === 'web-01')).toMatchObject({ success: true, changed: true, initiator: 'admin', target: 'db-01,web-01,web-02' })
    // Saltdeck's user, not the salt-api account salt reports; the job record keeps both.
    expect((await api('GET', `/api/jobs/${jid}`)).body).toMatchObject({ initiator: 'admin', user: env.SALT_USER, internal: false })
    // Saltdeck's own jobs (grains polls) are hidden from the jobs list unless asked for.
    const internal = (await api('GET', '/api/jobs?include_internal=true&fun=grains.items')).body
    expect(internal.total).toBeGreaterThan(0)
    expect(internal.jobs.every((j: any) => j.internal)).toBe(true)
    expect((await api('GET', '/api/jobs?fun=grains.items')).body.total).toBe(0)
    expect((await api('GET', '/api/activity?search=grains.items')).body.total).toBe(0)
  }, 180_000)

  test('alerts: db-01\'s failing demo state fires run_failed once, and the webhook receives one notification naming it', async () => {
    const ch = await api('POST', '/api/alerts/channels', { name: 'receiver', type: 'webhook', config: { url: `http://127.0.0.1:${receiver.port}/hook` } })
    expect(ch.status).toBe(201)
    expect((await api('POST', '/api/alerts/rules', { name: 'db failures', kind: 'run_failed', minion_glob: 'db-*', channel_ids: [ch.body.id] })).status).toBe(201)
    expect((await api('POST', '/api/alerts/rules', { name: 'offline', kind: 'minion_offline', params: { for_minutes: 1 }, channel_ids: [ch.body.id] })).status).toBe(201)
    await betweenScheduledRuns()
    const run = await api('POST', '/api/run', { tgt: 'db-01', fun: 'state.apply' })
    expect(run.status).toBe(202)
    await until(() => runOf('db-01', run.body.jid), 'db-01\'s run', BED)
    const a = await until(async () => (await api('GET', '/api/alerts')).body.alerts.find((x: any) => x.kind === 'run_failed') ?? null, 'the run_failed alert', BED)
    expect(a).toMatchObject({ subject: 'db-01', rule_name: 'db failures', state: 'firing', details: { jid: run.body.jid, function: 'state.apply', status: 'unhealthy' } })
    const n = await until(() => hooks.find((h) => h.rule.kind === 'run_failed') ?? null, 'the webhook', BED)
    expect(n.alerts.map((x) => x.subject)).toEqual(['db-01'])
    expect(hooks.filter((h) => h.rule.kind === 'run_failed')).toHaveLength(1)
  }, 180_000)

  test('pkg.list_pkgs yields inventory rows with correct counts', async () => {
    await until(async () => (await api('GET', '/api/minions?status=online')).body.total === 3, 'minions online', BED)
    const r = await api('POST', '/api/inventory/refresh', {})
    expect(r.status).toBe(202)
    const st = await until(async () => {
      const s = (await api('GET', '/api/inventory/status')).body
      return s.running ? null : s
    }, 'the refresh to finish', { ...BED, ms: 120_000 })
    expect(st.last).toMatchObject({ refresh_id: r.body.refresh_id, minions_asked: 3, minions_answered: 3, error: null })
    const mine = (await api('GET', '/api/minions/web-01/packages?limit=1')).body
    expect(mine.total).toBeGreaterThan(50)
    expect(st.last.packages_stored).toBe(mine.total * 3)
    // One host, three minions: every package is on all three, in one version.
    const pk = (await api('GET', '/api/inventory/packages?limit=500&sort=minion_count&order=asc')).body
    expect(pk.total).toBeGreaterThan(50)
    expect(pk.items[0].minion_count).toBe(3)
    expect(pk.items.every((p: any) => p.version_count === 1)).toBe(true)
    const v = (await api('GET', `/api/inventory/packages/${encodeURIComponent(pk.items[0].name)}/versions`)).body
    expect(v.versions[0]).toMatchObject({ minion_count: 3, source: 'apt' })
  }, 180_000)

  test('vulnerabilities from the real packages: a feed written for the versions installed here matches all three minions, reaches libssl3 through its source openssl, and the version queries agree', async () => {
    // The minions run on this host, so their packages are the host's: dpkg-query says which versions they report.
    const q = Bun.spawnSync(['dpkg-query', '-W', '-f', '${Package}\\t${Version}\\t${source:Package}\\n', 'openssl', 'libssl3', 'bash', 'coreutils'], { stdout: 'pipe' })
    const installed = Object.fromEntries(q.stdout.toString().trim().split('\n').map((l) => l.split('\t')).map(([p, v, s]) => [p!, { version: v!, source: s! }]))
    expect(installed.openssl?.version).toBeTruthy()
    expect(installed.libssl3?.source).toBe('openssl')
    const major = (await api('GET', '/api/minions/web-01')).body.grains.osmajorrelease
    const eco = `Debian:${major}`
    const r = (id: string, pkg: string, events: Record<string, string>[], severity = 'high') =>
      ({ id, summary: `${id}: test record for ${pkg}`, database_specific: { severity }, affected: [{ package: { ecosystem: eco, name: pkg }, ranges: [{ type: 'ECOSYSTEM', events }] }] })
    const fixedOpenssl = `${installed.openssl!.version}+saltdeck1` // just above what is installed, in dpkg's order
    const feed = [
      r('SDT-OPENSSL', 'openssl', [{ introduced: '0' }, { fixed: fixedOpenssl }], 'critical'),
      r('SDT-BASH', 'bash', [{ introduced: '0' }, { fixed: installed.bash!.version }]),
      r('SDT-COREUTILS', 'coreutils', [{ introduced: '0' }, { last_affected: installed.coreutils!.version }], 'medium'),
      { ...r('SDT-UBUNTU', 'openssl', [{ introduced: '0' }]), affected: [{ package: { ecosystem: 'Ubuntu:22.04:LTS', name: 'openssl' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }] }] },
    ]
    const imp = await api('POST', '/api/vulns/import', feed)
    expect(imp.status).toBe(200)
    expect(imp.body.feeds.map((f: any) => f.ecosystem)).toEqual([eco, 'Ubuntu:22.04'])
    // The refresh above learned each key's source package once, from one minion: the openssl record reaches libssl3.
    const one = await until(async () => {
      const v = (await api('GET', '/api/vulns/SDT-OPENSSL')).body
      return v.minions?.some((m: any) => m.package === 'libssl3') ? v : null
    }, 'libssl3 to be matched through its source package', BED)
    const learned = /source packages learned.*?"?ms"?[=:](\d+)/.exec(srv.output())
    console.log(`salt ${VERSION}: source packages learned in ${learned?.[1] ?? '?'} ms (${/source packages learned.*?"?calls"?[=:](\d+)/.exec(srv.output())?.[1] ?? '?'} pkg.info_installed calls)`)
    const rows = one.minions.map((m: any) => `${m.minion_id}:${m.package}`).filter((x: string) => /:(openssl|libssl3)$/.test(x)).sort()
    expect(rows).toEqual(['db-01:libssl3', 'db-01:openssl', 'web-01:libssl3', 'web-01:openssl', 'web-02:libssl3', 'web-02:openssl'])
    expect(one.minions[0]).toMatchObject({ installed: installed.openssl!.version, fixed: fixedOpenssl })
    const list = (await api('GET', '/api/vulns?include_unaffected=true')).body
    const count = (id: string) => list.vulns.find((v: any) => v.id === id)?.minion_count
    expect([count('SDT-OPENSSL'), count('SDT-BASH'), count('SDT-COREUTILS'), count('SDT-UBUNTU')]).toEqual([3, 0, 3, 0])
    const mine = (await api('GET', '/api/minions/web-01/vulns')).body
    expect(mine.ecosystem).toBe(eco)
    expect(mine.vulns.map((v: any) => v.id)).toEqual(['SDT-OPENSSL', 'SDT-COREUTILS'])
    const who = async (op: string, v: string) => (await api('GET', `/api/inventory/packages/openssl/minions?op=${op}&version=${encodeURIComponent(v)}`)).body
    expect((await who('lt', fixedOpenssl)).minions.map((m: any) => m.minion_id)).toEqual(['db-01', 'web-01', 'web-02'])
    expect((await who('ge', fixedOpenssl)).total).toBe(0)
    expect((await who('eq', installed.openssl!.version)).total).toBe(3)
  }, 180_000)

  test('the Salt health view names the master version, the minions\' versions and the known faults of this version', async () => {
    expect(env.SALT_BED_VERSION).toBe(VERSION)
    const h = await until(async () => {
      const x = (await api('GET', '/api/salt/health')).body
      return x.master.version && x.minion_versions.every((v: any) => v.version) && x.event_stream.state === 'connected' ? x : null
    }, 'the master version and the minions\' versions', BED)
    expect(h.master.version).toBe(VERSION)
    expect(h.minion_versions).toEqual([{ version: VERSION, minions: 3 }])
    const faults: Record<string, string[]> = { '3006.28': [], '3007.15': ['manage-status-up'], '3008.3': ['split-grains-cache', 'key-finger-armor', 'logout-revokes'] }
    expect(h.known_faults.map((f: any) => f.id)).toEqual(faults[VERSION] ?? [])
    expect(h).toMatchObject({ configured: true, presence_known: true, salt_api: { reachable: true } })
    expect(h.problems).toEqual([])
  }, 90_000)

  test('key actions on a real key are judged by salt\'s key list: accept, then delete (3008\'s key.delete answers no keys)', async () => {
    // A second key with web-01's public key, as a minion that asked to join would leave it.
    const pki = join(bedDir, 'm/etc/salt/pki/master')
    copyFileSync(join(bedDir, 'r/web-01/etc/salt/pki/minion/minion.pub'), join(pki, 'minions_pre/ghost-01'))
    await until(async () => (await api('GET', '/api/keys')).body.pending.includes('ghost-01'), 'ghost-01 pending', BED)
    expect((await api('POST', '/api/keys/ghost-01/accept')).status).toBe(204)
    expect((await api('GET', '/api/keys')).body.accepted).toContain('ghost-01')
    expect((await api('DELETE', '/api/keys/ghost-01')).status).toBe(204)
    const keys = (await api('GET', '/api/keys')).body
    expect([...keys.accepted, ...keys.pending, ...keys.rejected]).not.toContain('ghost-01')
    expect((await api('DELETE', '/api/keys/ghost-01')).status).toBe(404)
    const audit = (await api('GET', '/api/audit?action=key.delete')).body.entries
    expect(audit.map((a: any) => [a.target, a.ok])).toEqual([['ghost-01', false], ['ghost-01', true]])
    expect((await api('GET', '/api/activity?event_type=key.delete&minion_id=ghost-01')).body.total).toBe(1)
  }, 90_000)

  test('state.apply demo, then its dry run, then state.sls broken on web-01: the dry run leaves the last run alone, the state table is salt\'s, the diff lists the demo states', async () => {
    const runJob = async (fun: string, arg: string[], wait = true) => {
      if (wait) await betweenScheduledRuns()
      const r = await api('POST', '/api/run', { tgt: 'web-01', fun, arg })
      expect(r.status).toBe(202)
      return until(() => runOf('web-01', r.body.jid), `the run of ${fun} ${arg.join(' ')}`, BED)
    }
    const demo = await runJob('state.apply', ['demo'])
    expect(demo).toMatchObject({ status: 'changed', test: false, sls: ['demo'] })
    // Read the last run in a gap between web-01's scheduled runs, then dispatch the dry run at once: a scheduled
    // (real) run cannot land in between.
    await betweenScheduledRuns()
    const last = (await api('GET', '/api/minions/web-01')).body.last_run
    expect(last.status).toBe('changed')
    const dry = await runJob('state.apply', ['demo', 'test=True'], false)
    expect(dry).toMatchObject({ test: true, sls: ['demo'] })
    expect((await api('GET', '/api/minions/web-01')).body.last_run).toEqual(last)
    // The state table is salt's own return, in salt's order: ids, results and comments.
    const detail = (await api('GET', `/api/minions/web-01/runs/${demo.jid}`)).body
    const raw = (await api('GET', `/api/jobs/${demo.jid}`)).body.returns.find((r: any) => r.minion_id === 'web-01').return
    const salts = Object.values(raw as Record<string, any>).sort((a, b) => a.__run_num__ - b.__run_num__).map((x) => [x.__id__, x.result, x.comment])
    expect(detail.states.map((x: any) => [x.id, x.result, x.comment])).toEqual(salts)
    expect(detail.states.map((x: any) => x.id)).toEqual(['demo-file', 'demo-ok'])
    const dryStates = (await api('GET', `/api/minions/web-01/runs/${dry.jid}`)).body.states
    expect(dryStates.find((x: any) => x.id === 'demo-file').result).toBeNull()
    const broken = await runJob('state.sls', ['broken'])
    expect(broken).toMatchObject({ status: 'unhealthy', test: false })
    const bd = (await api('GET', `/api/minions/web-01/runs/${broken.jid}`)).body
    expect(bd.states).toBeNull()
    expect(bd.errors[0]).toContain("Rendering SLS 'base:broken' failed")
    const diff = (await api('GET', `/api/minions/web-01/runs/${broken.jid}/diff?against=${demo.jid}`)).body
    expect(diff.states.map((x: any) => [x.id, x.before, x.after])).toEqual([['demo-file', { result: true, changed: true }, null], ['demo-ok', { result: true, changed: false }, null]])
    const prev = (await api('GET', `/api/minions/web-01/runs/${broken.jid}/diff?against=last_good`)).body
    expect(prev.from.test).toBe(false)
  }, 300_000)

  test('salt-api killed: presence is unknown, not online; back: Saltdeck notices within seconds and the poller error clears', async () => {
    expect(bed('stop-api', bedDir).exitCode).toBe(0)
    await api('POST', '/api/admin/pollers/presence/run')
    const down = await until(async () => {
      const h = (await api('GET', '/api/salt/health')).body
      return h.presence_known === false ? h : null
    }, 'presence unknown', BED)
    expect(down.salt_api.reachable).toBe(false)
    expect(down.problems[0]).toContain('salt-api does not answer')
    expect((await api('GET', '/api/minions/web-01')).body.presence).toBe('unknown')
    expect(bed('start-api', bedDir).exitCode).toBe(0)
    const t0 = Date.now()
    // What stood between salt-api answering and Saltdeck saying so, each state once with when it was first seen.
    const seen = new Map<string, number>()
    await until(async () => {
      const h = (await api('GET', '/api/salt/health')).body
      const state = JSON.stringify({ presence_known: h.presence_known, stream: h.event_stream.state, problems: h.problems })
      if (!seen.has(state)) seen.set(state, Date.now() - t0)
      return h.presence_known && h.event_stream.state === 'connected' && h.problems.length === 0
    }, 'salt-api noticed again', { ms: 30_000, every: 200 })
    const noticedMs = Date.now() - t0
    console.log(`salt ${VERSION}: salt-api back, stream connected and no problems left ${noticedMs} ms after it answered /login`)
    for (const [state, ms] of seen) console.log(`  +${ms} ms: ${state}`)
    expect(noticedMs).toBeLessThan(10_000)
    const presence = (await api('GET', '/api/admin/pollers')).body.pollers.find((p: any) => p.name === 'presence')
    expect(presence.last_error).toBeNull()
    expect((await api('GET', '/api/minions/web-01')).body.presence).toBe('online')
  }, 120_000)

  test('runs that happened while Saltdeck was stopped are read from the job cache when it starts, with the right counts', async () => {
    await betweenScheduledRuns()
    await srv.stop()
    const cli = bed('salt', bedDir, '--show-jid', '*', 'state.apply')
    const jid = /jid: (\d{20})/.exec(cli.stdout.toString())?.[1]
    expect(jid, `${cli.stdout}\n${cli.stderr}`).toBeTruthy()
    await serve()
    const [web01, db01, web02] = await until(async () => {
      const all = await Promise.all(['web-01', 'db-01', 'web-02'].map((m) => runOf(m, jid!)))
      return all.every(Boolean) ? all : null
    }, 'three runs backfilled', { ...BED, ms: 120_000 })
    expect(web01).toMatchObject({ status: 'changed', pass_count: 2, fail_count: 0, change_count: 1, total_count: 2 })
    expect(db01).toMatchObject({ status: 'unhealthy', pass_count: 2, fail_count: 1, change_count: 1, total_count: 3 })
    expect(web02).toMatchObject({ status: 'unhealthy', pass_count: 0, change_count: 0 })
    // The salt CLI's user, not the salt-api account.
    const job = (await api('GET', `/api/jobs/${jid}`)).body
    expect(job).toMatchObject({ jid, fun: 'state.apply' })
    expect(job.user).toBeTruthy()
    expect(job.user).not.toBe(env.SALT_USER)
    const rets = (await api('GET', `/api/activity?jid=${jid}&event_type=job.ret`)).body.events
    expect(rets.map((e: any) => e.minion_id).sort()).toEqual(['db-01', 'web-01', 'web-02'])
  }, 180_000)

  test('an orchestration\'s state run (salt-run state.orchestrate) is captured as a run of the minion it targets', async () => {
    const out = bed('salt-run', bedDir, '--out=json', 'state.orchestrate', 'orch.demo')
    const text = out.stdout.toString()
    const jid = /"__jid__":\s*"(\d{20})"/.exec(text)?.[1]
    expect(jid, `${text}\n${out.stderr}`).toBeTruthy()
    const run = await until(() => runOf('web-02', jid!), 'the orchestrated run of web-02', BED)
    expect(run).toMatchObject({ fun: 'state.sls', status: 'changed', sls: ['demo'], test: false, pass_count: 2 })
    const job = (await api('GET', `/api/jobs/${jid}`)).body
    expect(job).toMatchObject({ fun: 'state.sls', sls: ['demo'], internal: false })
    expect(job.initiator).toBeTruthy()
  }, 120_000)

  test('runners through POST /api/run (client runner): an orchestration\'s own job, finished, lists its child job with its outcome; another runner\'s return stored', async () => {
    const r = await api('POST', '/api/run', { client: 'runner', fun: 'state.orchestrate', kwarg: { mods: 'orch.demo' } })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    const jid = r.body.jid as string
    // The orchestration's own job is listed, the caller's, before it returns.
    expect((await api('GET', '/api/jobs?limit=500')).body.jobs.find((j: any) => j.jid === jid)).toMatchObject({ fun: 'runner.state.orchestrate', initiator: 'admin', kwargs: { mods: 'orch.demo' } })
    const done = await until(async () => {
      const j = (await api('GET', `/api/jobs/${jid}`)).body
      return j.status === 'finished' && j.children.every((c: any) => c.job?.returned === 1) ? j : null
    }, 'the orchestration finished with its child job indexed and returned', { ms: 120_000, every: 1000 })
    expect(done).toMatchObject({ returned: 1, failed: 0, returns: [{ success: true }] })
    expect(done.children).toHaveLength(1)
    expect(done.children[0]).toMatchObject({ step: 'orch-demo', job: { fun: 'state.sls', sls: ['demo'], status: 'finished', returned: 1, failed: 0 } })
    expect(done.children[0].job.minions).toEqual(['web-02'])
    const a = await api('POST', '/api/run', { client: 'runner', fun: 'test.arg', arg: ['one'], kwarg: { two: 2 } })
    expect(a.status, JSON.stringify(a.body)).toBe(202)
    const arg = await until(async () => {
      const j = (await api('GET', `/api/jobs/${a.body.jid}`)).body
      return j.status === 'finished' ? j : null
    }, 'the test.arg runner finished', BED)
    expect(arg).toMatchObject({ fun: 'runner.test.arg', children: [], returns: [{ success: true, return: { args: ['one'], kwargs: { two: 2 } } }] })
  }, 240_000)

  test('a minion\'s own schedule (return_job) is captured as a run with initiator schedule', async () => {
    const ev = await until(async () => {
      const e = (await api('GET', '/api/activity?event_type=job.ret&minion_id=web-01&limit=500')).body.events.find((x: any) => x.initiator === 'schedule')
      return e ?? null
    }, 'a scheduled run of web-01', { ms: 150_000, every: 1000 })
    expect(ev).toMatchObject({ fun: 'state.apply', success: true, changed: true })
    const run = await runOf('web-01', ev.jid)
    expect(run).toMatchObject({ status: 'changed', pass_count: 2, fail_count: 0, total_count: 2 })
    expect((await api('GET', `/api/jobs/${ev.jid}`)).body).toMatchObject({ user: 'schedule', target: 'web-01' })
    // No publish precedes a schedule's return: it is held, and stored from salt's job cache (this process's count:
    // Saltdeck may have been restarted since the run above).
    const confirmed = async () => Number(/^saltdeck_salt_returns_confirmed_total (\d+)$/m.exec(await (await fetch(`${srv.url}/metrics`, { headers: auth })).text())?.[1])
    await until(async () => (await confirmed()) >= 1, 'a scheduled return confirmed through the job cache', { ms: 150_000, every: 1000 })
  }, 330_000)

  test('events web-02 forges on the bus (event.fire_master) are not stored as runs, returns, jobs, minions, keys or alerts, and /metrics counts them; a CLI run is still captured', async () => {
    const metrics = async () => (await fetch(`${srv.url}/metrics`, { headers: auth })).text()
    const count = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
    await until(async () => (await api('GET', '/api/admin/pollers')).body.event_stream.connected, 'the event stream connected', BED)
    const any = (await api('POST', '/api/alerts/rules', { name: 'any failure', kind: 'run_failed', minion_glob: '*' })).body
    expect((await api('POST', '/api/alerts/rules', { name: 'pending keys', kind: 'key_pending' })).status).toBe(201)
    // db-01's real run fails (its demo state fails on purpose): its alert fires, and only a real passing run may resolve it.
    await betweenScheduledRuns()
    const real = await api('POST', '/api/run', { tgt: 'db-01', fun: 'state.apply' })
    await until(() => runOf('db-01', real.body.jid), "db-01's real run", BED)
    const dbAlert = await until(async () => (await api('GET', '/api/alerts')).body.alerts.find((a: any) => a.rule_id === any.id && a.subject === 'db-01') ?? null, "db-01's run_failed alert", BED)
    const before = await metrics()
    const [J1, J2, J3] = ['20261126999999999901', '20261126999999999902', '20261126999999999903']
    const failed = { 'test_|-x_|-x_|-fail_without_changes': { result: false, changes: {}, comment: 'Failure!', __run_num__: 0, __id__: 'x', name: 'x', duration: 1 } }
    const healthy = { 'test_|-x_|-x_|-succeed_without_changes': { result: true, changes: {}, comment: 'Success!', __run_num__: 0, __id__: 'x', name: 'x', duration: 1 } }
    const md = '20261126999999999999 @channel ![x](http://evil.example/x.png) [Click to re-authenticate](http://evil.example/)'
    const stamp = '2026-11-26T14:02:18.333373+00:00'
    const frame = (tag: string, data: object) => `tag: ${tag}\r\ndata: ${JSON.stringify({ data, tag })}\r\n\r\n`
    const events = [
      { tag: `salt/job/${J1}/ret/web-01`, data: { id: 'web-01', jid: J1, fun: 'state.apply', fun_args: [], retcode: 2, success: false, return: failed } },
      { tag: `salt/job/${J2}/ret/db-01`, data: { id: 'db-01', jid: J2, fun: 'state.apply', fun_args: [], retcode: 0, success: true, return: healthy } },
      { tag: 'salt/auth', data: { act: 'pend', id: 'ghost-99', result: true, pub: 'x' } },
      { tag: `salt/job/${md}/ret/web-01`, data: { id: 'web-01', jid: md, fun: 'state.apply', retcode: 2, success: false, return: failed } },
      // A tag that writes a frame of its own (a pending key for inj-01) into salt-api's stream.
      { tag: `a\r\n\r\n${frame('salt/key', { act: 'pend', id: 'inj-01', result: true, _stamp: stamp })}tag: zz`, data: { x: 1 } },
    ]
    const fire = (...args: string[]) => {
      // -t 60: on a loaded host salt's CLI can take longer than its 5 s default to gather a return.
      const r = bed('salt', bedDir, '-t', '60', 'web-02', 'event.fire_master', ...args, '--out=json', '--static')
      expect(JSON.parse(r.stdout.toString() || '{}')['web-02'], `${r.stdout}${r.stderr}`).toBe(true)
    }
    // The events form (salt filters salt/key and salt/job/*/new from it, nothing else) and the one-piece form with a
    // preload (no filter at all): a publish for J3 to db-01, a key acceptance, and a return with the sender's own id.
    fire('{}', 'ignored', `preload=${JSON.stringify({ events })}`)
    fire('{}', `salt/job/${J3}/new`, `preload=${JSON.stringify({ jid: J3, fun: 'state.apply', minions: ['db-01'], tgt: 'db-01', tgt_type: 'glob', user: 'root', arg: [] })}`)
    fire('{}', 'salt/key', `preload=${JSON.stringify({ act: 'pend', result: true })}`)
    fire('{}', `salt/job/${J3}/ret/db-01`, `preload=${JSON.stringify({ jid: J3, fun: 'state.apply', retcode: 0, success: true, return: healthy })}`)
    const after = await until(async () => {
      const t = await metrics()
      const grown = (n: string) => count(t, n) > count(before, n)
      return ['saltdeck_salt_returns_held_total', 'saltdeck_salt_events_refused_total{reason="jid"}', 'saltdeck_salt_events_refused_total{reason="forged"}',
        'saltdeck_salt_events_refused_total{reason="injected"}', 'saltdeck_salt_event_hints_total{hint="keys"}'].every(grown) ? t : null
    }, 'the forged events counted', BED)
    expect(count(after, 'saltdeck_salt_returns_held_total') - count(before, 'saltdeck_salt_returns_held_total')).toBeGreaterThanOrEqual(2)
    // The job cache is asked (2 s, then 5 s after holding) and knows neither return; then a real CLI run still arrives.
    await Bun.sleep(7_000)
    await betweenScheduledRuns()
    const cli = bed('salt', bedDir, '-t', '60', '--show-jid', 'web-01', 'state.apply', 'demo')
    const cliJid = /jid: (\d{20})/.exec(cli.stdout.toString())?.[1]
    expect(cliJid, `${cli.stdout}\n${cli.stderr}`).toBeTruthy()
    expect(await until(() => runOf('web-01', cliJid!), 'the CLI run of web-01', BED)).toMatchObject({ status: 'changed', sls: ['demo'] })
    for (const [m, jid] of [['web-01', J1], ['db-01', J2], ['db-01', J3]] as const) expect(await runOf(m, jid)).toBeNull()
    for (const jid of [J1, J2, J3]) expect((await api('GET', `/api/jobs/${jid}`)).status).toBe(404)
    expect((await api('GET', `/api/activity?search=${encodeURIComponent('@channel')}`)).body.total).toBe(0)
    expect((await api('GET', '/api/minions/ghost-99')).status).toBe(404)
    const keys = (await api('GET', '/api/keys')).body
    expect([...keys.pending, ...keys.accepted, ...keys.rejected, ...keys.denied].sort()).toEqual(['db-01', 'web-01', 'web-02'])
    const alerts = (await api('GET', '/api/alerts')).body.alerts
    expect(alerts.filter((a: any) => a.kind === 'key_pending')).toEqual([])
    expect(alerts.filter((a: any) => a.rule_id === any.id && a.subject === 'web-01')).toEqual([])
    expect((await api('GET', `/api/alerts/${dbAlert.id}`)).body.state).toBe('firing')
    expect((await api('GET', '/api/minions/web-01')).body.last_run.status).toBe('changed')
    console.log(`salt ${VERSION}: forged events refused/held: ${after.split('\n').filter((l) => /^saltdeck_salt_(events_refused|returns_held|event_hints)/.test(l)).join(', ')}`)
  }, 240_000)

  test('scoped permissions: a role allowed test.* on web-* runs on web-01 and web-02 only; salt expands every target, nothing refused reaches db-01', async () => {
    const role = (await api('POST', '/api/roles', { name: 'web-testers' })).body
    expect((await api('POST', `/api/roles/${role.id}/permissions`, { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' })).status).toBe(201)
    expect((await api('POST', '/api/users', { username: 'webtester', password: 'webtester-pw', must_change_pw: false, roles: [role.id] })).status).toBe(201)
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'webtester', password: 'webtester-pw' }) })
    const as = { authorization: `Bearer ${login.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}`, 'content-type': 'application/json' }
    const run = async (body: Record<string, unknown>) => {
      const r = await fetch(`${srv.url}/api/run`, { method: 'POST', headers: as, body: JSON.stringify(body) })
      return { status: r.status, body: (await r.json()) as any }
    }
    // A marker in every call's arguments finds this test's jobs in salt's own job cache.
    const marker = `scoped-${Date.now()}`
    const ok = await run({ tgt: 'web-*', fun: 'test.echo', arg: [marker] })
    expect(ok.status).toBe(202)
    expect(ok.body.minions.sort()).toEqual(['web-01', 'web-02'])
    const ng = await run({ tgt: 'webs', tgt_type: 'nodegroup', fun: 'test.echo', arg: [marker] })
    expect(ng.status).toBe(202)
    expect(ng.body.minions.sort()).toEqual(['web-01', 'web-02'])
    const ping = await run({ tgt: ['web-01', 'web-02'], tgt_type: 'list', fun: 'test.ping' })
    expect(ping.status).toBe(202)
    const pinged = await until(async () => {
      const j = (await api('GET', `/api/jobs/${ping.body.jid}`)).body
      return j?.returns?.length === 2 ? j : null
    }, 'both web minions answered the ping', BED)
    expect(pinged.returns.map((r: any) => [r.minion_id, r.return])).toEqual([['web-01', true], ['web-02', true]])
    const refusedDb = { status: 403, body: { detail: 'Not allowed: test.echo on 1 minions (db-01)' } }
    expect(await run({ tgt: '*', fun: 'test.echo', arg: [marker] })).toEqual(refusedDb)
    expect(await run({ tgt: 'role:db', tgt_type: 'grain', fun: 'test.echo', arg: [marker] })).toEqual(refusedDb)
    expect(await run({ tgt: 'web-01 or G@role:db', tgt_type: 'compound', fun: 'test.echo', arg: [marker] })).toEqual(refusedDb)
    expect(await run({ tgt: 'dbs', tgt_type: 'nodegroup', fun: 'test.echo', arg: [marker] })).toEqual(refusedDb)
    expect(await run({ tgt: '^db-', tgt_type: 'pcre', fun: 'test.echo', arg: [marker] })).toEqual(refusedDb)
    expect(await run({ tgt: 'web-01', fun: 'cmd.run', arg: [`echo ${marker}`] })).toEqual({ status: 403, body: { detail: 'Not allowed: function cmd.run' } })
    expect(await run({ tgt: 'nosuch-*', fun: 'test.echo', arg: [marker] })).toEqual({ status: 404, body: { detail: 'No minions matched the target' } })
    const audit = (await api('GET', '/api/audit?action=job.run&user=webtester')).body.entries
    expect(audit.filter((e: any) => !e.ok).map((e: any) => e.detail)).toEqual([
      'No minions matched the target', 'Not allowed: function cmd.run', ...Array(5).fill('Not allowed: test.echo on 1 minions (db-01)'),
    ])
    // Salt's job cache (asked of salt-api directly, as salt's own account): only the two allowed echo jobs carry the
    // marker, each published as a list of the web minions.
    const saltRunner = async (fun: string, kwarg: Record<string, unknown> = {}) => {
      const r = await fetch(`${env.SALT_URL}/run`, {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify([{ client: 'runner', fun, kwarg, username: env.SALT_USER, password: env.SALT_PASSWORD, eauth: env.SALT_EAUTH }]),
      })
      return ((await r.json()) as { return: any[] }).return[0]
    }
    const cache = (await saltRunner('jobs.list_jobs')) as Record<string, any>
    const ours = Object.entries(cache).filter(([, j]) => JSON.stringify(j.Arguments ?? []).includes(marker))
    expect(ours.map(([jid]) => jid).sort()).toEqual([ok.body.jid, ng.body.jid].sort())
    for (const [jid, j] of ours) {
      expect(j).toMatchObject({ Function: 'test.echo', 'Target-type': 'list' })
      const job = await saltRunner('jobs.list_job', { jid })
      expect([...job.Minions].sort()).toEqual(['web-01', 'web-02'])
      expect(Object.keys(job.Result ?? {})).not.toContain('db-01')
    }
  }, 360_000)

  test('a schedule fires its template on the real master within seconds of its minute, as its creator, once, with an activity event', async () => {
    const marker = `schedule-${Date.now()}`
    const t = await api('POST', '/api/templates', { name: `Echo ${marker}`, tgt: 'web-*', fun: 'test.echo', arg: [marker] })
    expect(t.status).toBe(201)
    const s = await api('POST', '/api/schedules', { name: `Every minute ${marker}`, template_id: t.body.id, cron: '* * * * *', timezone: 'Europe/Berlin' })
    expect(s.status).toBe(201)
    const due = Date.parse(s.body.next_run_at)
    const fired = await until(async () => {
      const x = (await api('GET', `/api/schedules/${s.body.id}`)).body
      return x.last_jid ? x : null
    }, 'the schedule fired', { ms: 120_000, every: 1_000 })
    // Stop it before the next minute so exactly one firing is looked at.
    expect((await api('PATCH', `/api/schedules/${s.body.id}`, { enabled: false })).status).toBe(200)
    expect(fired).toMatchObject({ last_error: null, created_by: 'admin', enabled: true })
    expect(Date.parse(fired.last_run_at) - due).toBeGreaterThanOrEqual(0)
    expect(Date.parse(fired.last_run_at) - due).toBeLessThan(30_000)
    const job = await until(async () => {
      const j = (await api('GET', `/api/jobs/${fired.last_jid}`)).body
      return j?.returns?.length === 2 ? j : null
    }, 'both web minions answered the scheduled echo', BED)
    expect(job.returns.map((r: any) => [r.minion_id, r.return]).sort()).toEqual([['web-01', marker], ['web-02', marker]])
    const ev = (await api('GET', '/api/activity?event_type=job.schedule_fired&limit=50')).body.events.filter((e: any) => e.target === `Every minute ${marker}`)
    expect(ev.map((e: any) => [e.jid, e.initiator, e.success])).toEqual([[fired.last_jid, 'admin', true]])
  }, 240_000)

  test("the target preview (POST /api/run/preview) matches what salt's own CLI previews (salt --preview-target) for every target type, and runs nothing", async () => {
    const cases: [string | string[], string, string[]][] = [
      ['*', 'glob', []], ['web-*', 'glob', []], ['role:db', 'grain', ['-G']], ['web-01 or G@role:db', 'compound', ['-C']],
      ['N@dbs or web-02', 'compound', ['-C']], ['webs', 'nodegroup', ['-N']], ['^db-', 'pcre', ['-E']], [['web-01', 'db-01'], 'list', ['-L']],
      ['127.0.0.0/8', 'ipcidr', ['-S']], ['nosuch-*', 'glob', []],
    ]
    const jobsBefore = (await api('GET', '/api/jobs?user=admin&limit=1')).body.total
    for (const [tgt, tgt_type, flags] of cases) {
      // Options before the target: after it, salt passes them to the function as arguments.
      const r = bed('salt', bedDir, '--preview-target', '--out=json', ...flags, Array.isArray(tgt) ? tgt.join(',') : tgt, 'test.ping')
      const listed = r.stdout.toString().match(/\[[\s\S]*\]/)
      if (!listed) throw new Error(`salt --preview-target: ${r.stdout}${r.stderr}`)
      const salt = (JSON.parse(listed[0]) as string[]).sort()
      const preview = await api('POST', '/api/run/preview', { tgt, tgt_type })
      expect({ tgt, status: preview.status, minions: preview.body.minions, count: preview.body.count }).toEqual({ tgt, status: 200, minions: salt, count: salt.length })
    }
    expect((await api('POST', '/api/run/preview', { tgt: '*' })).body.minions).toEqual(['db-01', 'web-01', 'web-02'])
    expect((await api('POST', '/api/run/preview', { tgt: 'db-01', fun: 'cmd.run' })).body).toEqual({ count: 1, minions: ['db-01'], outside_scope: [], functions_allowed: true })
    // Nothing was published: the preview asks salt's matching only.
    expect((await api('GET', '/api/jobs?user=admin&limit=1')).body.total).toBe(jobsBefore)
  }, 480_000) // each salt CLI call starts a Python process: seconds apiece on a busy machine

  test('a batch of one over the three minions (POST /api/run with batch 1): one slice at a time, each published after the previous returned; done; audited once', async () => {
    const r = await api('POST', '/api/run', { tgt: '*', fun: 'test.ping', batch: 1, batch_stop_on_failure: true })
    expect(r.status).toBe(202)
    expect([...r.body.minions].sort()).toEqual(['db-01', 'web-01', 'web-02'])
    const done = await until(async () => {
      const b = (await api('GET', `/api/batches/${r.body.batch_id}`)).body
      return b.state === 'running' ? null : b
    }, 'the batch finished', { ms: 180_000, every: 1000 })
    expect(done.state).toBe('done')
    expect(done.slices.map((s: any) => [s.minions, s.returned, s.failed])).toEqual([[['db-01'], 1, 0], [['web-01'], 1, 0], [['web-02'], 1, 0]])
    expect(done.slices[0].jid).toBe(r.body.jid)
    for (let i = 1; i < 3; i++) expect(Date.parse(done.slices[i].started_at)).toBeGreaterThanOrEqual(Date.parse(done.slices[i - 1].finished_at))
    // Salt's own job cache: each slice's job went to its one minion and returned True.
    for (const s of done.slices) {
      const job = (await api('GET', `/api/jobs/${s.jid}`)).body
      expect(job.returns.map((x: any) => [x.minion_id, x.return])).toEqual([[s.minions[0], true]])
    }
    const audit = (await api('GET', '/api/audit?action=job.run&user=admin')).body.entries.filter((e: any) => String(e.detail).includes(r.body.batch_id))
    expect(audit.map((e: any) => e.detail)).toEqual([`jid ${r.body.jid}, batch ${r.body.batch_id}`])
  }, 240_000)

  test('a stopped minion goes offline', async () => {
    const t0 = Date.now()
    expect(bed('stop-minion', bedDir, 'db-01').exitCode).toBe(0)
    await until(async () => (await api('GET', '/api/minions/db-01')).body.online === false, 'db-01 offline', { ...BED, ms: 90_000 })
    // And it stays offline: the master's presence events (every 5 s, by address) still list db-01 but are not trusted
    // with presence method status.
    await Bun.sleep(12_000)
    expect((await api('GET', '/api/minions/db-01')).body.online).toBe(false)
    // Once since the stop (a ping db-01 missed under load in an earlier test is not this test's business); every
    // presence event of db-01 is printed if not, to tell a flap after the stop from an earlier one.
    const seen = (await api('GET', '/api/activity?category=minion&minion_id=db-01&limit=50')).body.events
    const offline = seen.filter((e: any) => e.event_type === 'minion.offline' && Date.parse(e.ts) >= t0)
    expect(offline.length, `stopped at ${new Date(t0).toISOString()}; db-01's presence events: ${JSON.stringify(seen.map((e: any) => [e.ts, e.event_type]))}`).toBe(1)
    expect((await api('GET', '/api/minions/web-01')).body.online).toBe(true)
    // Offline for a minute: minion_offline fires and is sent; back online, it resolves and that is sent too.
    const off = await until(async () => (await api('GET', '/api/alerts')).body.alerts.find((x: any) => x.kind === 'minion_offline' && x.subject === 'db-01') ?? null, 'the offline alert', { ms: 150_000, every: 2000 })
    expect(off.state).toBe('firing')
    await until(() => hooks.find((h) => h.rule.kind === 'minion_offline' && h.status === 'firing') ?? null, 'the offline notification', BED)
    expect(bed('start-minion', bedDir, 'db-01').exitCode).toBe(0)
    await until(async () => (await api('GET', `/api/alerts/${off.id}`)).body.state === 'resolved' || null, 'the offline alert resolved', { ms: 90_000, every: 1000 })
    await until(() => hooks.find((h) => h.rule.kind === 'minion_offline' && h.status === 'resolved') ?? null, 'the resolved notification', BED)
  }, 420_000)

  test('salt-master stopped: within 60 s the master is unreachable (salt-api is not), presence unknown, master_unreachable fires; back: it resolves, and no minion goes offline nor does minion_offline fire', async () => {
    // The default presence interval (60 s): the grace after the master answers again is two of them, as operators run it.
    expect((await api('PUT', '/api/admin/settings/pollers', { minion_state_presence_interval_seconds: 60 })).status).toBe(200)
    expect((await api('POST', '/api/alerts/rules', { name: 'master down', kind: 'master_unreachable', params: { for_minutes: 1 } })).status).toBe(201)
    expect((await api('POST', '/api/alerts/rules', { name: 'offline at once', kind: 'minion_offline', params: { for_minutes: 1 } })).status).toBe(201)
    const ids = ['db-01', 'web-01', 'web-02']
    // db-01 runs (the test before restarts it; if that test failed midway it did not, and this one is not about it).
    expect(bed('start-minion', bedDir, 'db-01').exitCode).toBe(0)
    await until(async () => (await api('GET', '/api/minions')).body.minions.filter((m: any) => m.presence === 'online').length === 3 || null, 'three minions online', { ...BED, ms: 120_000 })
    const t0 = Date.now()
    expect(bed('stop-master', bedDir).exitCode).toBe(0)
    const down = await until(async () => {
      const h = (await api('GET', '/api/salt/health')).body
      return h.master.reachable === false ? h : null
    }, 'the master unreachable', { ms: 90_000, every: 1000 })
    const seenMs = Date.now() - t0
    console.log(`salt ${VERSION}: master stop seen after ${seenMs} ms`)
    expect(seenMs).toBeLessThan(60_000)
    expect(down.salt_api.reachable).not.toBe(false)
    expect(down.presence_known).toBe(false)
    expect(down.master.presence_hold).toBe('down')
    expect(Date.parse(down.master.since)).toBeGreaterThanOrEqual(t0 - 16_000)
    expect(down.problems.some((p: string) => p.startsWith('The salt-master does not answer through salt-api'))).toBe(true)
    expect((await api('GET', '/api/minions/web-01')).body.presence).toBe('unknown')
    const alert = await until(async () => (await api('GET', '/api/alerts')).body.alerts.find((x: any) => x.kind === 'master_unreachable' && x.state === 'firing') ?? null, 'master_unreachable firing', { ms: 120_000, every: 2000 })
    expect(alert.subject).toBe('salt-master')
    // A presence tick while the master is down ends at once instead of hanging on the master (one begun before the stop
    // was seen waits 30 s at most).
    const idle = async () => (await api('GET', '/api/admin/pollers')).body.pollers.find((p: any) => p.name === 'presence').running === false || null
    await until(idle, 'no presence tick running', { ms: 35_000, every: 500 })
    expect((await api('POST', '/api/admin/pollers/presence/run')).status).toBe(202)
    await until(idle, 'the presence tick done at once', { ms: 5_000, every: 200 })
    // The minions re-authenticate with the new master by themselves: 22–60 s here, once over 120 s in CI (3007.15).
    // That is salt's pace, not Saltdeck's: the bed waits up to 4 minutes for it.
    const started = bedWith({ SALT_BED_START_TIMEOUT: '240' }, 'start-master', bedDir)
    expect(started.exitCode, started.stderr.toString()).toBe(0)
    await until(async () => (await api('GET', `/api/alerts/${alert.id}`)).body.state === 'resolved' || null, 'master_unreachable resolved', { ms: 90_000, every: 1000 })
    const back = (await api('GET', '/api/salt/health')).body
    expect(back.master.reachable).toBe(true)
    // The grace (two presence intervals) ends, then presence is known again with every minion online.
    await until(async () => (await api('GET', '/api/salt/health')).body.presence_known === true || null, 'presence known again', { ms: 200_000, every: 2000 })
    await Bun.sleep(5_000)
    const minions = (await api('GET', '/api/minions')).body.minions
    expect(minions.filter((m: any) => ids.includes(m.id)).map((m: any) => [m.id, m.presence])).toEqual(ids.map((id) => [id, 'online']))
    const offline = (await api('GET', '/api/activity?event_type=minion.offline&limit=100')).body.events.filter((e: any) => Date.parse(e.ts) >= t0)
    expect(offline).toEqual([])
    const alerts = (await api('GET', '/api/alerts?state=all&limit=200')).body.alerts.filter((x: any) => x.kind === 'minion_offline' && Date.parse(x.first_seen_at) >= t0)
    expect(alerts).toEqual([])
    expect((await api('PUT', '/api/admin/settings/pollers', { minion_state_presence_interval_seconds: 3 })).status).toBe(200)
  }, 900_000)
})
