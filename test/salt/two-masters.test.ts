// Contract §15 "Several masters" against two real salt-masters (test/salt/bed.sh, issue 25 item 4): master 1 (the
// `default` source) with m1-01, master 2 (the source `east`, added through the admin API) with m2-01, and both-01, one
// minion of salt's multi-master listing both. Saltdeck must list three minions, route each job to the master
// responsible for each minion, record what each master reported with its source, and keep the sources' health apart.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { databaseEnv, startServe, type Served } from '../helpers/serve'
import { until, type Patience } from '../helpers/until'
import { openDb, openPostgres, type Db } from '../../src/db/client'
import { sql } from '../../src/db/sql'

const CI = process.env.CI === 'true'
const bedSync = (...args: string[]) => Bun.spawnSync(['bash', 'test/salt/bed.sh', ...args], { stdout: 'pipe', stderr: 'pipe', env: process.env })
const install = bedSync('install')
const unavailable = install.exitCode === 3 && !CI
if (unavailable) console.warn(`test/salt: SKIPPED — the Salt test bed cannot be installed here:\n${install.stderr.toString()}`)
else if (install.exitCode !== 0) throw new Error(`bed.sh install failed (exit ${install.exitCode}):\n${install.stderr.toString()}`)

const VERSION = process.env.SALT_BED_VERSION ?? '3006.28'
const root = mkdtempSync('/tmp/sd2-')
const bed1 = join(root, 'a')
const bed2 = join(root, 'b')
const dataDir = join(root, 'saltdeck')
const BED: Patience = { ms: 60_000, every: 500 }
let srv: Served | undefined
let auth: Record<string, string> = {}
let db: Db | undefined

/** A bed.sh command with extra environment, waited for without blocking the event loop (Saltdeck keeps serving). */
async function bed(env: Record<string, string>, ...args: string[]) {
  const p = Bun.spawn(['bash', 'test/salt/bed.sh', ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  if (code !== 0) throw new Error(`bed.sh ${args.join(' ')}: exit ${code}\n${out}${err}`)
  return out
}
const readEnv = (dir: string) => Object.fromEntries(readFileSync(join(dir, 'bed.env'), 'utf8').trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]))
const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${srv!.url}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: r.status, body: (await r.json().catch(() => null)) as any }
}
/** One master's own job cache record of a jid (salt-run jobs.list_job): what that master published and heard back. */
async function masterJob(dir: string, jid: string) {
  const out = await bed({}, 'salt-run', dir, 'jobs.list_job', jid, '--out=json')
  return JSON.parse(out) as { Function?: string; Minions?: string[]; Result: Record<string, { return: unknown }> }
}

let cleaned = false
/** Stops Saltdeck and both beds (master 2's first: it owns both-01) and removes the dir; safe to call more than once. */
function cleanupSync() {
  if (cleaned) return
  cleaned = true
  srv?.proc.kill('SIGKILL')
  for (const dir of [bed2, bed1]) bedSync('stop', dir)
  rmSync(root, { recursive: true, force: true })
}
// A test process killed by a timeout or ^C must not leave salt daemons behind.
process.on('exit', cleanupSync)
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => (cleanupSync(), process.exit(130)))

beforeAll(async () => {
  if (unavailable) return
  try {
    await bed({ SALT_BED_MINION_IDS: 'm1-01' }, 'start', bed1)
    await bed({ SALT_BED_MINION_IDS: 'm2-01,both-01', SALT_BED_PEER: bed1, SALT_BED_SHARED_IDS: 'both-01' }, 'start', bed2)
    const [e1, e2] = [readEnv(bed1), readEnv(bed2)]
    srv = await startServe(dataDir, {
      SALTDECK_ADMIN_PASSWORD: 'two-masters-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024', SALTDECK_PRESENCE_METHOD: 'status',
      SALTDECK_SALT_URL: e1.SALT_URL!, SALTDECK_SALT_USERNAME: e1.SALT_USER!, SALTDECK_SALT_PASSWORD: e1.SALT_PASSWORD!, SALTDECK_SALT_EAUTH: e1.SALT_EAUTH!,
    })
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'two-masters-pw' }) })
    auth = { authorization: `Bearer ${login.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]}`, 'content-type': 'application/json' }
    expect((await api('PUT', '/api/admin/settings/pollers', {
      minion_state_keys_interval_seconds: 2, minion_state_presence_interval_seconds: 3, minion_state_grains_interval_seconds: 5,
      minion_state_initial_delay_seconds: 0, jobs_poll_interval_seconds: 5, event_stream_enabled: true,
    })).status).toBe(200)
    const add = await api('POST', '/api/admin/salt-sources', { name: 'east', url: e2.SALT_URL, username: e2.SALT_USER, password: e2.SALT_PASSWORD, eauth: e2.SALT_EAUTH })
    expect(add.status, JSON.stringify(add.body)).toBe(201)
    // The database serve writes (SQLite file, or the PostgreSQL database the helper gave this data dir): runs carry
    // their source in storage only.
    const url = (await databaseEnv(dataDir, {})).SALTDECK_DATABASE_URL
    db = url ? openPostgres(url, { max: 1 }) : openDb(join(dataDir, 'saltdeck.db'))
  } catch (e) {
    cleanupSync()
    throw e
  }
}, 300_000)

afterAll(async () => {
  if (unavailable) return
  await db?.close()
  await srv?.stop()
  await Promise.all([bed2, bed1].map((dir) => bed({}, 'stop', dir).catch((e) => console.error(String(e)))))
  cleanupSync()
}, 90_000)

describe.skipIf(unavailable)(`real salt ${VERSION}: two masters, one pane`, () => {
  test('minions of both masters are listed with their source; the multi-master minion is one minion with both', async () => {
    const list = async (q = '') => (await api('GET', `/api/minions${q}`)).body
    const all = await until(async () => {
      const l = await list()
      const b = l.minions.find((m: any) => m.id === 'both-01')
      return l.total === 3 && b?.sources.length === 2 ? l : null
    }, 'three minions, both-01 seen through both masters', BED)
    expect(all.minions.map((m: any) => [m.id, m.key_state, m.sources])).toEqual([
      ['both-01', 'accepted', ['default', 'east']], ['m1-01', 'accepted', ['default']], ['m2-01', 'accepted', ['east']],
    ])
    expect((await api('GET', '/api/minions/both-01')).body.sources).toEqual(['default', 'east'])
    expect((await list('?source=east')).minions.map((m: any) => m.id)).toEqual(['both-01', 'm2-01'])
    expect((await list('?source=default')).minions.map((m: any) => m.id)).toEqual(['both-01', 'm1-01'])
    expect(await list('?source=nowhere')).toEqual({ total: 0, minions: [] })
    // One key each, although both masters hold both-01's.
    expect((await api('GET', '/api/keys')).body.accepted).toEqual(['both-01', 'm1-01', 'm2-01'])
    // Grains came through a master that holds the minion: both-01's own.
    const g = await until(async () => ((m) => (m.grains?.id === 'both-01' ? m : null))((await api('GET', '/api/minions/both-01')).body), "both-01's grains", BED)
    expect(g.grains.role).toBe('both')
    const sources = (await api('GET', '/api/admin/salt-sources')).body.sources.map((s: any) => s.name)
    expect(sources).toEqual(['default', 'east'])
  }, 120_000)

  test("a state run to '*' reaches every minion once, each through its master, and the runs and events carry the source", async () => {
    await until(async () => (await api('GET', '/api/salt/health')).body.sources.every((s: any) => s.event_stream.state === 'connected'), 'both event streams connected', BED)
    const r = await api('POST', '/api/run', { tgt: '*', fun: 'state.sls', arg: ['demo'] })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect([...r.body.minions].sort()).toEqual(['both-01', 'm1-01', 'm2-01'])
    const jid = r.body.jid as string
    // Each master's own job cache: master 1 published to its own minion and the shared one, master 2 to its own only.
    const [m1, m2] = await until(async () => {
      const both = await Promise.all([masterJob(bed1, jid), masterJob(bed2, jid)])
      return both.every((j) => j.Minions?.every((m) => j.Result[m])) ? both : null
    }, 'both masters to hold the returns of the minions they published to', BED)
    expect([m1.Minions, m2.Minions]).toEqual([['both-01', 'm1-01'], ['m2-01']])
    // A minion of both masters sends its return to every master it is connected to (master 2 holds both-01's return of
    // a job it never published to it); it ran the state once, from master 1's file tree: demo.sls writes into <bed>/out.
    console.log(`salt ${VERSION}: master 2's job cache holds the returns of ${Object.keys(m2.Result).sort().join(', ')}`)
    expect(Object.keys(m2.Result).filter((m) => m !== 'both-01')).toEqual(['m2-01'])
    expect([existsSync(join(bed1, 'out/both-01.txt')), existsSync(join(bed2, 'out/both-01.txt'))]).toEqual([true, false])
    expect([existsSync(join(bed1, 'out/m2-01.txt')), existsSync(join(bed2, 'out/m2-01.txt'))]).toEqual([false, true])
    // One run per minion, each with the source its return came through: the master of a minion of one master; for
    // both-01, whichever master's bus delivered its return first.
    const runs = await until(async () => {
      const rows = await db!.rows<{ minion_id: string; source: string; status: string }>(sql`SELECT minion_id, source, status FROM runs WHERE jid = ${jid} ORDER BY minion_id`)
      return rows.length >= 3 ? rows : null
    }, 'three runs stored', BED)
    expect(runs.map((x) => [x.minion_id, x.status])).toEqual([['both-01', 'changed'], ['m1-01', 'changed'], ['m2-01', 'changed']])
    expect(runs.slice(1).map((x) => x.source)).toEqual(['default', 'east'])
    expect(['default', 'east']).toContain(runs[0]!.source)
    console.log(`salt ${VERSION}: both-01's run is stored with source ${runs[0]!.source}`)
    for (const m of ['both-01', 'm1-01', 'm2-01']) expect((await api('GET', `/api/minions/${m}/runs`)).body.runs.filter((x: any) => x.jid === jid)).toHaveLength(1)
    const rets = await until(async () => {
      const ev = (await api('GET', `/api/activity?jid=${jid}&event_type=job.ret`)).body.events
      return ev.length >= 3 ? ev : null
    }, 'three job.ret events', BED)
    expect(rets.map((e: any) => e.minion_id).sort()).toEqual(['both-01', 'm1-01', 'm2-01'])
    const sourceOf = (id: string) => rets.find((e: any) => e.minion_id === id).source
    expect([sourceOf('m1-01'), sourceOf('m2-01')]).toEqual(['default', 'east'])
    expect(sourceOf('both-01')).toBe(runs[0]!.source)
    // The job as a whole: every minion it went to through either master, every return under the one jid.
    const job = await until(async () => ((j) => (j.minions?.length === 3 ? j : null))((await api('GET', `/api/jobs/${jid}`)).body), 'the job with both masters\' parts', BED)
    expect({ minions: job.minions, target: job.target, returned: job.returned, status: job.status }).toEqual({ minions: ['both-01', 'm1-01', 'm2-01'], target: 'both-01,m1-01,m2-01', returned: 3, status: 'finished' })
    expect(['default', 'east']).toContain(job.source)
    const fromEast = (await api('GET', `/api/activity?jid=${jid}&source=east`)).body.events
    expect(fromEast.some((e: any) => e.minion_id === 'm2-01')).toBe(true)
    expect(fromEast.every((e: any) => e.source === 'east' && e.minion_id !== 'm1-01')).toBe(true)
    const fromDefault = (await api('GET', `/api/activity?jid=${jid}&source=default`)).body.events
    expect(fromDefault.some((e: any) => e.minion_id === 'm1-01')).toBe(true)
    expect(fromDefault.every((e: any) => e.source === 'default' && e.minion_id !== 'm2-01')).toBe(true)
    expect((await api('GET', `/api/activity?jid=${jid}&source=nowhere`)).body).toEqual({ total: 0, events: [] })
  }, 180_000)

  test('a job for master 2\'s minions only goes to master 2: master 1 never hears of it; the jobs list filters by source', async () => {
    const r = await api('POST', '/api/run', { tgt: 'm2-*', fun: 'test.ping' })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(r.body.minions).toEqual(['m2-01'])
    const jid = r.body.jid as string
    const m2 = await until(async () => ((j) => (j.Result['m2-01'] ? j : null))(await masterJob(bed2, jid)), "master 2's return", BED)
    expect(m2).toMatchObject({ Function: 'test.ping', Minions: ['m2-01'], Result: { 'm2-01': { return: true } } })
    const job = await until(async () => ((j) => (j.returns?.length === 1 ? j : null))((await api('GET', `/api/jobs/${jid}`)).body), 'the job and its return stored', BED)
    expect(job).toMatchObject({ source: 'east', returns: [{ minion_id: 'm2-01', return: true }] })
    // Master 1's job cache has no such job (salt answers an empty Result and no Function for a jid it never saw).
    const m1 = await masterJob(bed1, jid)
    expect({ fun: m1.Function, result: m1.Result }).toEqual({ fun: undefined, result: {} })
    const jobs = async (q: string) => (await api('GET', `/api/jobs?limit=500${q}`)).body
    expect((await jobs('&source=east')).jobs.find((j: any) => j.jid === jid)).toMatchObject({ source: 'east' })
    expect((await jobs('&source=default')).jobs.map((j: any) => j.jid)).not.toContain(jid)
    const east = (await jobs('&source=east')).jobs
    expect(east.every((j: any) => j.source === 'east')).toBe(true)
    expect(await jobs('&source=nowhere')).toEqual({ total: 0, jobs: [] })
    const events = (await api('GET', `/api/activity?jid=${jid}`)).body.events
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e: any) => e.source === 'east')).toBe(true)
  }, 120_000)

  test("master 2's salt-api stopped: Salt health names east unreachable, default stays healthy, master 1's minion stays online; back: east answers again", async () => {
    await until(async () => (await api('GET', '/api/minions/m1-01')).body.presence === 'online', 'm1-01 online', BED)
    await bed({}, 'stop-api', bed2)
    const stoppedAt = Date.now()
    const h = await until(async () => {
      const x = (await api('GET', '/api/salt/health')).body
      return x.sources.find((s: any) => s.name === 'east')?.salt_api.reachable === false ? x : null
    }, 'east unreachable in Salt health', BED)
    const [def, east] = h.sources
    expect(east).toMatchObject({ name: 'east', salt_api: { reachable: false } })
    expect(h.problems.some((p: string) => p.startsWith('Salt source east: salt-api does not answer'))).toBe(true)
    expect(def).toMatchObject({ name: 'default', salt_api: { reachable: true }, master: { reachable: true }, presence_known: true })
    expect(h).toMatchObject({ salt_api: { reachable: true }, presence_known: true })
    expect(h.problems.filter((p: string) => !p.startsWith('Salt source east'))).toEqual([])
    // Two of default's presence ticks (every 3 s) after the stop, both successful: master 1's minion is still online.
    const presence = async () => (await api('GET', '/api/salt/health')).body.sources[0].pollers.find((p: any) => p.name === 'presence')
    const first = await until(async () => ((p) => (p.last_success_at && Date.parse(p.last_success_at) > stoppedAt ? p : null))(await presence()), "a presence tick of default's after the stop", BED)
    await until(async () => ((p) => (Date.parse(p.last_success_at) > Date.parse(first.last_success_at) ? p : null))(await presence()), 'another presence tick', BED)
    expect((await presence()).last_error).toBeNull()
    expect((await api('GET', '/api/minions/m1-01')).body).toMatchObject({ online: true, presence: 'online' })
    expect((await api('GET', '/api/activity?event_type=minion.offline&minion_id=m1-01')).body.total).toBe(0)
    await bed({}, 'start-api', bed2)
    await until(async () => {
      const x = (await api('GET', '/api/salt/health')).body
      return x.sources.find((s: any) => s.name === 'east')?.salt_api.reachable === true && x.problems.length === 0
    }, 'east reachable again and no problem left', BED)
  }, 180_000)
})
