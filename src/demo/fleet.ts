/**
 * The demo fleet: a few hundred made-up minions with two weeks of state runs, packages, vulnerability findings and
 * alerts, stored through the features' own functions (applyFacts, recordGrains, the package writer, the feed import,
 * the alert rules), so what the demo shows is what Saltdeck makes of such facts, not rows written by hand.
 */
import type { AppDeps } from '../deps'
import type { SaltClient } from '../salt/client'
import { noFacts, type JobReturned, type JobStarted, type SaltFacts } from '../salt/facts'
import { newJid } from '../lib/salt-time'
import { Logger } from '../lib/log'
import { applyFacts } from '../features/ingest/apply'
import { recordGrains } from '../features/minions/service'
import { watchGrains } from '../features/vulns/watch'
import { PackageSetWriter } from '../features/inventory/writer'
import { sourceOf } from '../features/inventory/service'
import { learnSources } from '../features/inventory/sources'
import { importFeed } from '../features/vulns/feeds'
import { createRule } from '../features/alerts/service'
import { watchTime } from '../features/alerts/watch'
import { DEMO_OSV } from './osv'

const DAY = 86_400_000
const MIN = 60_000
/** Days of run history. */
export const DEMO_DAYS = 14

type Role = 'web' | 'app' | 'db' | 'cache' | 'lb' | 'ci' | 'mon'
type Os = 'debian' | 'ubuntu' | 'rocky'
type Outcome = 'healthy' | 'changed' | 'unhealthy' | 'blocked'

/** Each role: how many minions, their OS, the id's digits. */
const ROLES: [Role, number, Os, number][] = [
  ['web', 120, 'debian', 3], ['app', 90, 'debian', 3], ['db', 24, 'debian', 2], ['cache', 16, 'debian', 2],
  ['lb', 8, 'rocky', 2], ['ci', 30, 'ubuntu', 2], ['mon', 6, 'debian', 2],
]

/** A small deterministic generator (mulberry32), so every demo shows the same fleet. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One made-up minion. */
interface DemoMinion {
  id: string
  role: Role
  os: Os
  n: number
  /** Offline since (epoch ms), or null. */
  offlineAt: number | null
  /** Its runs fail from this day index on (0 = today), or null. */
  failsFrom: number | null
  blocked: boolean
}

/** The fleet's minions and keys. */
function fleet(now: number, rnd: () => number): { minions: DemoMinion[]; pending: string[]; rejected: string[] } {
  const minions: DemoMinion[] = []
  for (const [role, count, os, digits] of ROLES)
    for (let n = 1; n <= count; n++) minions.push({ id: `${role}-${String(n).padStart(digits, '0')}`, role, os, n, offlineAt: null, failsFrom: null, blocked: false })
  // A few hosts stopped answering over the last days; some are failing their runs; two are blocked by a stuck run.
  for (const id of ['app-017', 'web-088', 'ci-12', 'cache-09', 'app-062']) minions.find((m) => m.id === id)!.offlineAt = now - Math.floor((0.2 + rnd() * 3) * DAY)
  for (const [id, from] of [['web-014', 0], ['web-015', 0], ['web-071', 1], ['db-07', 0], ['app-033', 2], ['app-034', 2], ['app-035', 0], ['cache-03', 1], ['lb-02', 0], ['ci-04', 3], ['web-102', 0]] as const)
    minions.find((m) => m.id === id)!.failsFrom = from
  for (const id of ['app-051', 'db-19']) minions.find((m) => m.id === id)!.blocked = true
  return { minions, pending: ['web-121', 'app-091', 'ci-31'], rejected: ['laptop-jdoe'] }
}

/** The grains a minion of that OS reports. */
function grains(m: DemoMinion): Record<string, unknown> {
  const ip = `10.${['web', 'app', 'db', 'cache', 'lb', 'ci', 'mon'].indexOf(m.role) + 10}.${Math.floor(m.n / 200)}.${(m.n % 200) + 10}`
  const os = m.os === 'debian' ? { os: 'Debian', os_family: 'Debian', osrelease: '12.8', osmajorrelease: 12, oscodename: 'bookworm', kernelrelease: '6.1.0-28-amd64' }
    : m.os === 'ubuntu' ? { os: 'Ubuntu', os_family: 'Debian', osrelease: '22.04', osmajorrelease: 22, oscodename: 'jammy', kernelrelease: '5.15.0-125-generic' }
      : { os: 'Rocky', os_family: 'RedHat', osrelease: '9.4', osmajorrelease: 9, oscodename: 'Blue Onyx', kernelrelease: '5.14.0-427.13.1.el9_4.x86_64' }
  return {
    id: m.id, ...os, kernel: 'Linux', saltversion: m.os === 'rocky' ? '3006.9' : '3007.1', cpuarch: 'x86_64', virtual: 'kvm',
    num_cpus: m.role === 'db' ? 16 : m.role === 'app' ? 8 : 4, mem_total: m.role === 'db' ? 64_000 : 16_000,
    fqdn: `${m.id}.prod.example.com`, ipv4: ['127.0.0.1', ip], roles: [m.role], datacenter: m.n % 2 ? 'fra1' : 'ams2',
  }
}

/** The packages a minion has installed (name, version, source package). */
function packages(m: DemoMinion): [string, string, string][] {
  const old = (share: number) => (m.n * 7919) % 100 < share
  if (m.os === 'rocky')
    return [['bash', '5.1.8-9.el9', 'bash'], ['openssl', '3.0.7-27.el9', 'openssl'], ['systemd', '252-32.el9_4', 'systemd'], ['salt-minion', '3006.9-1', 'salt'],
      ['kernel', old(75) ? '5.14.0-427.13.1.el9_4' : '5.14.0-427.31.1.el9_4', 'kernel'], ['haproxy', old(60) ? '2.4.22-3.el9_3' : '2.4.22-3.el9_4.1', 'haproxy'], ['chrony', '4.5-1.el9', 'chrony']]
  if (m.os === 'ubuntu')
    return [['bash', '5.1-6ubuntu1.1', 'bash'], ['openssl', old(65) ? '3.0.2-0ubuntu1.15' : '3.0.2-0ubuntu1.18', 'openssl'], ['libssl3', old(65) ? '3.0.2-0ubuntu1.15' : '3.0.2-0ubuntu1.18', 'openssl'],
      ['curl', '7.81.0-1ubuntu1.16', 'curl'], ['libcurl4', '7.81.0-1ubuntu1.16', 'curl'], ['docker.io', '24.0.7-0ubuntu2~22.04.1', 'docker.io'], ['git', '1:2.34.1-1ubuntu1.11', 'git'],
      ['salt-minion', '3007.1', 'salt'], ['systemd', '249.11-0ubuntu3.12', 'systemd']]
  const ssl = old(55) ? '3.0.13-1~deb12u1' : '3.0.15-1~deb12u1'
  const curl = old(45) ? '7.88.1-10+deb12u5' : '7.88.1-10+deb12u8'
  const base: [string, string, string][] = [['base-files', '12.4+deb12u8', 'base-files'], ['bash', '5.2.15-2+b7', 'bash'], ['coreutils', '9.1-1', 'coreutils'],
    ['openssl', ssl, 'openssl'], ['libssl3', ssl, 'openssl'], ['curl', curl, 'curl'], ['libcurl4', curl, 'curl'], ['openssh-server', '1:9.2p1-2+deb12u3', 'openssh'],
    ['systemd', '252.31-1~deb12u1', 'systemd'], ['python3', '3.11.2-1+b1', 'python3-defaults'], ['salt-minion', '3007.1', 'salt'], ['chrony', '4.3-2+deb12u1', 'chrony'],
    ['libc6', '2.36-9+deb12u9', 'glibc'], ['sudo', '1.9.13p3-1+deb12u1', 'sudo'], ['rsyslog', '8.2302.0-1', 'rsyslog']]
  if (m.role === 'web') base.push(['nginx', old(40) ? '1.22.1-9' : '1.22.1-9+deb12u1', 'nginx'], ['nginx-common', old(40) ? '1.22.1-9' : '1.22.1-9+deb12u1', 'nginx'])
  if (m.role === 'app') base.push(['openjdk-17-jre-headless', old(30) ? '17.0.11+9-1~deb12u1' : '17.0.13+11-2~deb12u1', 'openjdk-17'], ['git', '1:2.39.5-0+deb12u1', 'git'])
  if (m.role === 'db') base.push(['postgresql-15', old(50) ? '15.6-0+deb12u1' : '15.10-0+deb12u1', 'postgresql-15'], ['postgresql-client-15', old(50) ? '15.6-0+deb12u1' : '15.10-0+deb12u1', 'postgresql-15'])
  if (m.role === 'cache') base.push(['redis-server', old(50) ? '5:7.0.15-1~deb12u1' : '5:7.0.15-1~deb12u3', 'redis'], ['redis-tools', old(50) ? '5:7.0.15-1~deb12u1' : '5:7.0.15-1~deb12u3', 'redis'])
  if (m.role === 'mon') base.push(['prometheus', '2.42.0+ds-5+b5', 'prometheus'], ['grafana', '11.3.0', 'grafana'])
  return base
}

/** What the role's own states manage, and how they fail. */
const ROLE_STATES: Record<Role, { sls: string; pkg: string; file: string; service: string; failure: string }> = {
  web: { sls: 'nginx', pkg: 'nginx', file: '/etc/nginx/sites-enabled/app.conf', service: 'nginx',
    failure: 'Job for nginx.service failed because the control process exited with error code.\nnginx: [emerg] host not found in upstream "app-backend.internal:8080" in /etc/nginx/sites-enabled/app.conf:4' },
  app: { sls: 'app.deploy', pkg: 'openjdk-17-jre-headless', file: '/etc/app/application.yml', service: 'app',
    failure: 'Failed to check remote refs: ssh: connect to host git.example.com port 22: Connection timed out' },
  db: { sls: 'postgresql.server', pkg: 'postgresql-15', file: '/etc/postgresql/15/main/pg_hba.conf', service: 'postgresql',
    failure: 'Service postgresql failed to start\nJob for postgresql.service failed because the control process exited with error code.' },
  cache: { sls: 'redis', pkg: 'redis-server', file: '/etc/redis/redis.conf', service: 'redis-server',
    failure: "Job for redis-server.service failed: Bad directive or wrong number of arguments at line 1062 ('maxmemory-policy allkeys-lfu-x')" },
  lb: { sls: 'haproxy', pkg: 'haproxy', file: '/etc/haproxy/haproxy.cfg', service: 'haproxy',
    failure: "[ALERT] parsing [/etc/haproxy/haproxy.cfg:42] : unknown keyword 'balance-mode' in 'backend' section" },
  ci: { sls: 'ci.runner', pkg: 'docker.io', file: '/etc/docker/daemon.json', service: 'docker',
    failure: 'E: Unable to locate package gitlab-runner' },
  mon: { sls: 'prometheus', pkg: 'prometheus', file: '/etc/prometheus/prometheus.yml', service: 'prometheus',
    failure: 'Job for prometheus.service failed: error loading config: yaml: line 31: did not find expected key' },
}

/** A unified diff as file.managed reports it. */
const diffOf = (file: string, day: number) =>
  ['--- ', '+++ ', '@@ -1,5 +1,6 @@', `# managed by salt: ${file}`, ' # do not edit by hand', `-revision ${day + 40}`, `+revision ${day + 41}`, '+# added by change 4711', ' include /etc/common.d/*'].join('\n')

/** One state.apply return of a minion whose run comes out as `outcome`, in Salt's shape. */
function stateReturn(m: DemoMinion, outcome: Outcome, day: number, rnd: () => number): unknown {
  if (outcome === 'blocked')
    return [`The function "state.apply" is running as PID ${4000 + m.n} and was started at 2026, Nov 21 02:00:00.000000 with jid ${newJid(Date.now() - 3 * DAY)}`]
  const r = ROLE_STATES[m.role]
  const out: Record<string, unknown> = {}
  let order = 0
  const st = (mod: string, id: string, name: string, fun: string, sls: string, result: boolean, comment: string, changes: Record<string, unknown> = {}) => {
    out[`${mod}_|-${id}_|-${name}_|-${fun}`] = { __id__: id, __sls__: sls, __run_num__: order++, name, result, comment, changes, duration: Math.round((2 + rnd() * 400) * 1000) / 1000, start_time: '02:00:01.000000' }
  }
  const changed = outcome === 'changed'
  const failing = outcome === 'unhealthy'
  st('pkg', 'base-packages', 'base-packages', 'installed', 'common', true, 'All specified packages are already installed')
  st('file', '/etc/ssh/sshd_config', '/etc/ssh/sshd_config', 'managed', 'common.ssh', true, 'File /etc/ssh/sshd_config is in the correct state')
  st('service', 'sshd', 'ssh', 'running', 'common.ssh', true, 'The service ssh is already running')
  st('user', 'deploy', 'deploy', 'present', 'common.users', true, 'User deploy is present and up to date')
  st('file', '/etc/chrony/chrony.conf', '/etc/chrony/chrony.conf', 'managed', 'common.time', true, 'File /etc/chrony/chrony.conf is in the correct state')
  st('pkg', r.pkg, r.pkg, 'installed', r.sls, true, changed && m.n % 3 === 0 ? `The following packages were installed/updated: ${r.pkg}` : 'All specified packages are already installed',
    changed && m.n % 3 === 0 ? { [r.pkg]: { old: '1.0-1', new: '1.0-2' } } : {})
  if (m.role === 'app') {
    st('git', 'app-repo', 'git@git.example.com:shop/app.git', 'latest', r.sls, !failing, failing ? r.failure : 'Repository git@git.example.com:shop/app.git is up-to-date')
    st('file', r.file, r.file, 'managed', r.sls, !failing, failing ? 'One or more requisite failed: app.deploy.app-repo' : changed ? `File ${r.file} updated` : `File ${r.file} is in the correct state`,
      changed ? { diff: diffOf(r.file, day) } : {})
    st('service', r.service, r.service, 'running', r.sls, !failing, failing ? 'One or more requisite failed: app.deploy.app-repo' : 'The service app is already running')
  } else {
    st('file', r.file, r.file, 'managed', r.sls, true, changed || failing ? `File ${r.file} updated` : `File ${r.file} is in the correct state`, changed || failing ? { diff: diffOf(r.file, day) } : {})
    st('service', r.service, r.service, 'running', r.sls, !failing, failing ? r.failure : `The service ${r.service} is already running`)
  }
  return out
}

/** A state.apply job over a group of minions and their returns, as salt reports them. */
function runJob(group: DemoMinion[], target: string, at: number, outcomeOf: (m: DemoMinion) => Outcome, day: number, rnd: () => number): SaltFacts {
  const jid = newJid(at)
  const facts = noFacts()
  const job: JobStarted = { jid, fun: 'state.apply', target, tgtType: 'glob', user: 'root', arg: [], minions: group.map((m) => m.id), startedAt: at, ts: at }
  facts.jobs.push(job)
  for (const m of group) {
    const outcome = outcomeOf(m)
    const done = at + Math.round((20 + rnd() * 90) * 1000)
    const retcode = outcome === 'healthy' || outcome === 'changed' ? 0 : outcome === 'blocked' ? 1 : 2
    const ret: JobReturned = { jid, minionId: m.id, fun: 'state.apply', ret: stateReturn(m, outcome, day, rnd), retcode, success: retcode === 0, ts: done, stampMs: done, funArgs: [] }
    facts.returns.push(ret)
  }
  return facts
}

/** A job that is not a state run (cmd.run, test.ping, pkg.upgrade) started by a person. */
function adHocJob(ids: string[], target: string, fun: string, arg: unknown[], user: string, at: number, ret: (id: string) => unknown): SaltFacts {
  const jid = newJid(at)
  const facts = noFacts()
  facts.jobs.push({ jid, fun, target, tgtType: 'glob', user, arg, minions: ids, startedAt: at, ts: at })
  for (const id of ids) facts.returns.push({ jid, minionId: id, fun, ret: ret(id), retcode: 0, success: true, ts: at + 2000, stampMs: at + 2000, funArgs: arg })
  return facts
}

/** Seeds the demo fleet into an opened data directory; returns what it stored. */
export async function seedDemo(deps: AppDeps): Promise<{ minions: number; runs: number }> {
  const now = deps.clock.now()
  const start = now - (DEMO_DAYS + 1) * DAY
  const rnd = prng(23)
  const { minions, pending, rejected } = fleet(now, rnd)
  // The alert rules exist from before the history, so the runs below fire and resolve them as they happen.
  const then = { ...deps, clock: { now: () => start - DAY } }
  const rule = (name: string, kind: Parameters<typeof createRule>[1]['kind'], params: Record<string, unknown> = {}, minion_glob = '*') =>
    createRule(then, { name, kind, minion_glob, params, channel_ids: [], enabled: true, renotify_minutes: 0 })
  await rule('State runs failing', 'run_failed', { fun_glob: 'state.*' })
  await rule('State runs blocked', 'run_blocked', { fun_glob: 'state.*' })
  await rule('Database changes', 'run_changed', { fun_glob: 'state.*' }, 'db-*')
  await rule('Minion offline', 'minion_offline', { for_minutes: 10 })
  await rule('Keys waiting', 'key_pending')
  await rule('Load balancers vulnerable', 'vulnerable', { min_severity: 'high' }, 'lb-*')

  // Keys accepted at the start, presence, then grains: the facts the keys, presence and grains pollers would bring.
  const keys = noFacts()
  keys.keys = minions.map((m) => ({ minionId: m.id, act: 'accept' as const, ts: start + m.n * 1000 }))
  keys.keys.push(...rejected.map((id) => ({ minionId: id, act: 'reject' as const, ts: start + 3600_000 })))
  keys.presence = minions.map((m) => ({ minionId: m.id, online: true, ts: start + 2 * MIN }))
  keys.starts = minions.map((m) => ({ minionId: m.id, ts: start + MIN }))
  await applyFacts(deps, [keys])
  await recordGrains(deps, minions.map((m) => ({ id: m.id, grains: grains(m) })))
  await deps.db.tx((tx) => watchGrains(deps, tx, minions.map((m) => m.id)))

  // Packages as an inventory refresh stores them, then the source packages a refresh learns (pkg.info_installed).
  const writer = await PackageSetWriter.open(deps)
  for (const m of minions) writer.addPackages(m.id, sourceOf(m.os === 'rocky' ? 'RedHat' : 'Debian'), packages(m).map(([name, version]) => ({ name, version })))
  await writer.flush(now - 3 * 3600_000)
  const infoInstalled = { local: async (tgt: string[], _fun: string, o: { arg: string[] }) => {
    const m = minions.find((x) => x.id === tgt[0])!
    const src = new Map(packages(m).map(([n, , s]) => [n, s]))
    return { [m.id]: Object.fromEntries(o.arg.map((n) => [n, { source: src.get(n) ?? n }])) }
  } } as unknown as SaltClient
  let seq = 0
  await learnSources({ ...deps, log: new Logger('text', () => {}, true) }, infoInstalled, () => newJid(now - 3 * 3600_000 + seq++))
  await importFeed(deps, DEMO_OSV.map((value) => ({ from: 'demo-osv', value })), 'demo feed')

  // Fourteen nights of highstates, one job per role, in time order as salt would report them.
  let runs = 0
  const groups = ROLES.map(([role]) => minions.filter((m) => m.role === role))
  for (let day = DEMO_DAYS - 1; day >= 0; day--) {
    for (const [g, group] of groups.entries()) {
      const at = now - day * DAY - (90 - g * 7) * MIN
      const alive = group.filter((m) => m.offlineAt === null || m.offlineAt > at)
      const outcome = (m: DemoMinion): Outcome => {
        if (m.blocked && day === 0) return 'blocked'
        if (m.failsFrom !== null && day <= m.failsFrom) return 'unhealthy'
        const x = rnd()
        if (x < 0.015) return 'unhealthy'
        // A package update rolled out over the web tier a week ago, and a config change over the databases.
        if ((day === 6 && m.role === 'web') || (day === 3 && m.role === 'db') || x < 0.12) return 'changed'
        return 'healthy'
      }
      if (alive.length) await applyFacts(deps, [runJob(alive, `${group[0]!.role}-*`, at, outcome, day, rnd)])
      runs += alive.length
    }
  }
  // People at work: a few ad-hoc jobs, and new keys waiting for a decision.
  await applyFacts(deps, [adHocJob(minions.filter((m) => m.role === 'db').map((m) => m.id), 'db-*', 'cmd.run', ['df -h /var/lib/postgresql'], 'alice', now - 5 * 3600_000,
    () => 'Filesystem      Size  Used Avail Use% Mounted on\n/dev/vdb1       500G  312G  188G  63% /var/lib/postgresql')])
  await applyFacts(deps, [adHocJob(minions.filter((m) => m.role === 'lb').map((m) => m.id), 'lb-*', 'test.ping', [], 'bob', now - 2 * 3600_000, () => true)])
  const later = noFacts()
  later.keys = pending.map((id, i) => ({ minionId: id, act: 'pend' as const, ts: now - (3 - i) * 3600_000 }))
  // Seen by the presence poller until they went away; the rest answered a minute ago.
  later.presence = minions.filter((m) => m.offlineAt !== null).flatMap((m) => [{ minionId: m.id, online: true, ts: m.offlineAt! - 5 * MIN }, { minionId: m.id, online: false, ts: m.offlineAt! }])
  await applyFacts(deps, [later])
  await applyFacts(deps, [{ ...noFacts(), presentList: { ids: minions.filter((m) => m.offlineAt === null).map((m) => m.id), ts: now - MIN } }])
  // The alerts poller's first tick: offline minions and vulnerable ones.
  await watchTime(deps)
  return { minions: minions.length, runs }
}
