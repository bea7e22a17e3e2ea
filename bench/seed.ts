#!/usr/bin/env bun
/**
 * Seeds a Saltdeck data directory with a fleet-scale, deterministic data set for the read-path benchmark.
 *
 *   bun bench/seed.ts --data-dir bench/data/fleet [--minions 50000 --packages 1500 --events 2000000 --runs 50]
 *                     [--pool 20000] [--seed 42] [--force] [--verify full|sample]
 *
 * The data directory is created through openDataDir(loadConfig(...)) so that migrations and the built-in admin
 * exist (SALTDECK_ADMIN_PASSWORD, default "bench-admin-pw", so must_change_pw is false). Raw rows are then
 * written with prepared multi-row INSERTs in big transactions (journal off, synchronous off); package sets go
 * through the service's PackageSetWriter, one flush per collection batch at that batch's time, which also keeps
 * the inventory aggregates (package_stats, package_versions, package_seen). The aggregates are then checked
 * against (1) an independent recount of every package-set row read back from the database (`--verify full`,
 * default; `sample` recounts ~200 names only) and (2) replacePackageSets on a fresh writer: replaying the last
 * collection batch with the same sets must change nothing, and removing then re-adding a few of those minions
 * must restore the aggregates exactly.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Database } from 'bun:sqlite'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { Logger } from '../src/lib/log'
import { replacePackageSets, sourceOf, type PackageSet } from '../src/features/inventory/service'
import { decodeKeyIds } from '../src/features/inventory/holders'
import { PackageSetWriter } from '../src/features/inventory/writer'
import { indexActivity, listEvents } from '../src/features/activity/service'
import { grantsOf } from '../src/features/auth/service'
import { parseFlags } from '../src/cli'

// ---------------------------------------------------------------------------------------------------------------
// Arguments

const F = parseFlags(process.argv.slice(2), ['force', 'help'])
const known = ['data-dir', 'minions', 'packages', 'events', 'runs', 'pool', 'seed', 'force', 'verify', 'help']
for (const k of Object.keys(F)) if (!known.includes(k)) throw new Error(`unknown option --${k}`)
if (F.help || !F['data-dir']) {
  console.log('usage: bun bench/seed.ts --data-dir DIR [--minions 50000] [--packages 1500] [--events 2000000] [--runs 50] [--pool 20000] [--seed 42] [--force] [--verify full|sample]')
  process.exit(F.help ? 0 : 2)
}
const int = (k: string, d: number) => {
  const v = F[k] === undefined ? d : Number(F[k])
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${k} must be a non-negative integer`)
  return v
}
const DATA_DIR = resolve(F['data-dir'])
const N_MINIONS = int('minions', 50_000)
const N_PKGS = int('packages', 1500)
const N_EVENTS = int('events', 2_000_000)
const N_RUNS = int('runs', 50)
const POOL = int('pool', 20_000)
const SEED = int('seed', 42)
const VERIFY = F.verify ?? 'full'
if (!['full', 'sample'].includes(VERIFY)) throw new Error('--verify is full or sample')
if (N_PKGS > POOL * 0.6) throw new Error('--packages must be well below --pool')
const ADMIN_PASSWORD = process.env.SALTDECK_ADMIN_PASSWORD || 'bench-admin-pw'

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** sfc32: small, fast, deterministic. One independent stream per phase so phases do not perturb each other. */
function prng(seed: number, stream: number) {
  let a = 0x9e3779b9 ^ seed, b = 0x243f6a88 ^ stream, c = 0xb7e15162 ^ (seed * 31 + stream), d = 1
  const next = () => {
    a |= 0; b |= 0; c |= 0; d |= 0
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 20; i++) next()
  return next
}
type Rng = () => number
const pickInt = (r: Rng, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1)) // inclusive
const pick = <T>(r: Rng, xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!
function weighted<T>(r: Rng, xs: readonly (readonly [T, number])[]): T {
  let total = 0
  for (const [, w] of xs) total += w
  let u = r() * total
  for (const [v, w] of xs) if ((u -= w) < 0) return v
  return xs[xs.length - 1]![0]
}

const t0 = performance.now()
let tPhase = t0
const timings: Record<string, number> = {}
function phase(name: string) {
  const now = performance.now()
  timings[name] = Math.round(now - tPhase) / 1000
  console.log(`[seed] ${name.padEnd(34)} ${(timings[name]!).toFixed(1).padStart(8)} s   (total ${((now - t0) / 1000).toFixed(1)} s)`)
  tPhase = now
}
const fmt = (n: number) => n.toLocaleString('en-US')

/** A Salt jid (YYYYMMDDhhmmssffffff) for a time, unique within `used`. */
function jidOf(ms: number, used: Set<string>, r: Rng) {
  const d = new Date(ms)
  const p = (n: number, w = 2) => String(n).padStart(w, '0')
  const base = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`
  let micro = d.getUTCMilliseconds() * 1000 + Math.floor(r() * 1000)
  for (;;) {
    const j = base + p(micro % 1_000_000, 6)
    if (!used.has(j)) {
      used.add(j)
      return j
    }
    micro++
  }
}

/** A UUID v7-shaped id for a time, random bits from the PRNG (deterministic, unlike Bun.randomUUIDv7). */
function uuid7(ms: number, r: Rng) {
  const hex = (n: number, w: number) => Math.floor(n).toString(16).padStart(w, '0')
  const ts = hex(ms, 12)
  const rnd = () => hex(r() * 0x10000, 4)
  return `${ts.slice(0, 8)}-${ts.slice(8, 12)}-7${hex(r() * 0x1000, 3)}-${hex(0x8000 | (r() * 0x4000), 4)}-${rnd()}${rnd()}${rnd()}`
}

// ---------------------------------------------------------------------------------------------------------------
// Open the data directory through the service's own code path

if (existsSync(join(DATA_DIR, 'saltdeck.db'))) {
  if (!F.force) throw new Error(`${DATA_DIR} already holds a database; pass --force to replace it`)
  for (const f of readdirSync(DATA_DIR)) rmSync(join(DATA_DIR, f), { recursive: true, force: true })
}
mkdirSync(DATA_DIR, { recursive: true })
const config = loadConfig({ ...process.env, SALTDECK_ADMIN_PASSWORD: ADMIN_PASSWORD, SALTDECK_DATA_DIR: DATA_DIR }, { dataDir: DATA_DIR })
const deps = await openDataDir(config, new Logger('json', () => {}, true))
const db: Database = deps.db.$client
const admin = db.query<{ must_change_pw: number }, []>("SELECT must_change_pw FROM users WHERE username = 'admin'").get()
if (!admin || admin.must_change_pw) throw new Error('admin user missing or must_change_pw set')
console.log(`[seed] data dir ${DATA_DIR}: minions=${fmt(N_MINIONS)} packages/minion=${fmt(N_PKGS)} events=${fmt(N_EVENTS)} runs/minion=${N_RUNS} pool=${fmt(POOL)} seed=${SEED}`)

// Seeding mode: no journal, no fsync, a large page cache. Restored at the end.
db.exec('PRAGMA journal_mode = OFF')
db.exec('PRAGMA synchronous = OFF')
db.exec('PRAGMA cache_size = -2000000')
db.exec('PRAGMA foreign_keys = OFF')
phase('open + migrate + bootstrap')

/** The reference time of the data set: events and runs end here. */
const NOW = Date.now()
const DAY = 86_400_000
const WINDOW = 30 * DAY

// ---------------------------------------------------------------------------------------------------------------
// Package name pool with Zipf-like popularity

const COMMON = `base-files bash coreutils util-linux systemd libc6 glibc openssl libssl3 openssl-libs ca-certificates curl libcurl4 wget tar gzip
bzip2 xz-utils zstd grep sed gawk findutils diffutils less procps psmisc iproute2 iputils-ping net-tools openssh-server openssh-client
openssh-clients sudo passwd login shadow-utils tzdata locales hostname cron cronie logrotate rsyslog vim-tiny vim-minimal nano python3
python3-minimal libpython3.11 perl perl-base zlib1g zlib libzstd1 liblzma5 libbz2-1.0 libselinux1 libselinux libsystemd0 libudev1 dbus
libdbus-1-3 libexpat1 expat libffi8 libffi libgcc-s1 libgcc libstdc++6 libstdc++ libncursesw6 ncurses-libs libtinfo6 readline libreadline8
libpcre2-8-0 pcre2 libgmp10 gmp libnettle8 nettle libgnutls30 gnutls libkrb5-3 krb5-libs libgssapi-krb5-2 libcom-err2 libkeyutils1
keyutils-libs libacl1 libacl libattr1 libattr libcap2 libcap libaudit1 audit-libs libpam0g pam libpam-modules libsemanage2 libsepol2
libblkid1 libmount1 libuuid1 e2fsprogs libext2fs2 dpkg apt rpm dnf yum libsqlite3-0 sqlite-libs libxml2 libyaml-0-2 libyaml salt-minion
salt-common python3-yaml python3-jinja2 python3-msgpack python3-zmq python3-requests python3-urllib3 python3-certifi python3-idna
python3-six python3-distro python3-psutil python3-markupsafe python3-tornado python3-cryptography python3-cffi python3-pycparser
libzmq5 zeromq libsodium23 libsodium libpgm-5.3-0 openpgm gnupg gpg gpgv libgpg-error0 libgcrypt20 libassuan0 libksba8 pinentry-curses
kmod libkmod2 udev initscripts sysvinit-utils mount libsmartcols1 fdisk libfdisk1 adduser debconf debianutils lsb-base lsb-release
netbase ifupdown isc-dhcp-client dhcpcd chrony ntpsec-ntpdate man-db manpages groff-base file libmagic1 libmagic-mgc bsdutils
mawk ncurses-base ncurses-bin libnss3 nss libnspr4 nspr libldap-2.5-0 openldap libsasl2-2 cyrus-sasl-lib libnghttp2-14 libnghttp2
libpsl5 libpsl librtmp1 libssh2-1 libssh libbrotli1 brotli libidn2-0 libidn2 libunistring2 libunistring libtasn1-6 libtasn1 libp11-kit0
p11-kit libjson-c5 json-c libargon2-1 libcryptsetup12 libdevmapper1.02.1 device-mapper libseccomp2 libseccomp libapparmor1 git
git-man liberror-perl rsync htop lsof strace tcpdump jq unzip zip sysstat iotop dnsutils bind-utils telnet traceroute mtr-tiny
nginx nginx-common libnginx-mod-http-geoip2 haproxy postgresql-15 postgresql-client-15 mariadb-server redis-server memcached
docker-ce containerd.io runc nodejs npm openjdk-17-jre-headless java-17-openjdk-headless python3-pip python3-venv golang-go
linux-image-amd64 kernel kernel-core kernel-modules firmware-linux-free linux-firmware grub-pc grub2-pc grub-common grub2-common`
  .split(/\s+/).filter(Boolean)

const SYL = 'ab ac ad al am an ar as at av ba be bi bo ca ce co cu da de di do du el em en er es ev fa fe fi fo ga ge gi go gu ha he hi ho id il im in io ip ir is it ja jo ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu ob od ol om on op or os ot pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu ub ud ul um un ur us va ve vi vo xa xe xi yo za ze zi zo'.split(' ')
const PREFIX: [string, number][] = [['lib', 36], ['', 30], ['python3-', 9], ['node-', 5], ['golang-', 3], ['ruby-', 3], ['r-cran-', 3], ['fonts-', 2], ['perl-', 3], ['php-', 2], ['gir1.2-', 1], ['texlive-', 1], ['x11-', 1], ['qt6-', 1]]
const SUFFIX: [string, number][] = [['', 40], ['1', 6], ['2', 4], ['3', 3], ['6', 2], ['-dev', 8], ['-devel', 4], ['-common', 5], ['-data', 4], ['-utils', 4], ['-tools', 3], ['-doc', 4], ['-bin', 3], ['-perl', 2], ['0', 3], ['-1.0-0', 2], ['-plugins', 1], ['-server', 1], ['-client', 1]]

interface Name { name: string; avail: 'both' | 'apt' | 'rpm' }
function buildPool(): Name[] {
  const r = prng(SEED, 1)
  const seen = new Set<string>()
  const out: Name[] = []
  for (const n of COMMON) if (!seen.has(n) && out.length < POOL) {
    seen.add(n)
    out.push({ name: n, avail: 'both' })
  }
  while (out.length < POOL) {
    let stem = ''
    const ns = weighted(r, [[2, 3], [3, 4], [4, 2], [5, 1]] as const)
    for (let i = 0; i < ns; i++) stem += pick(r, SYL)
    const n = weighted(r, PREFIX) + stem + weighted(r, SUFFIX)
    if (seen.has(n)) continue
    seen.add(n)
    out.push({ name: n, avail: weighted(r, [['both', 76], ['apt', 12], ['rpm', 12]] as const) })
  }
  return out
}

interface SourceCatalog {
  source: 'apt' | 'rpm'
  /** Names available to the source, sorted by name (BINARY collation = JS code-unit order for ASCII). */
  names: string[]
  /** Inclusion probability of each name (Zipf by pool rank, capped at 1, summing to N_PKGS). */
  p: Float64Array
  /** Index (in `names`) of every name, ordered by popularity. */
  byRank: Int32Array
  /** Per name: versions (1..3), their cumulative weights and the arch. */
  versions: string[][]
  cum: number[][]
  arch: string[]
}

function versionString(r: Rng, source: 'apt' | 'rpm') {
  const maj = weighted(r, [[0, 2], [1, 5], [2, 4], [3, 3], [4, 1], [5, 1], [6, 1], [9, 1], [12, 1]] as const)
  const base = `${maj}.${pickInt(r, 0, 24)}.${pickInt(r, 0, 30)}`
  if (source === 'apt') {
    const deb = `${base}-${pickInt(r, 1, 12)}`
    return weighted(r, [[deb, 5], [`${deb}+deb12u${pickInt(r, 1, 9)}`, 3], [`${deb}ubuntu${pickInt(r, 1, 5)}`, 3], [`1:${deb}`, 1]] as const)
  }
  return `${base}-${pickInt(r, 1, 40)}.el9${weighted(r, [['', 4], [`_${pickInt(r, 2, 5)}`, 2], [`_${pickInt(r, 2, 5)}.${pickInt(r, 1, 3)}`, 1]] as const)}`
}

function buildCatalog(pool: Name[], source: 'apt' | 'rpm'): SourceCatalog {
  const r = prng(SEED, source === 'apt' ? 2 : 3)
  // Popularity rank = pool order among the names this source has.
  const ranked = pool.filter((n) => n.avail === 'both' || n.avail === source).map((n) => n.name)
  const k = 700
  const s = 2.2
  const raw = ranked.map((_, i) => Math.pow(i + 1 + k, -s))
  // Bisect the scale so that the expected set size is exactly N_PKGS.
  let lo = 0, hi = 1e9
  for (let it = 0; it < 200; it++) {
    const c = (lo + hi) / 2
    let sum = 0
    for (const w of raw) sum += Math.min(1, c * w)
    if (sum > N_PKGS) hi = c
    else lo = c
  }
  const order = ranked.map((n, i) => ({ n, i })).sort((a, b) => (a.n < b.n ? -1 : a.n > b.n ? 1 : 0))
  const names = order.map((o) => o.n)
  const p = new Float64Array(names.length)
  const byRank = new Int32Array(names.length)
  order.forEach((o, idx) => {
    p[idx] = Math.min(1, lo * raw[o.i]!)
    byRank[o.i] = idx
  })
  const versions: string[][] = [], cum: number[][] = [], arch: string[] = []
  for (const n of names) {
    const nv = weighted(r, [[1, 50], [2, 35], [3, 15]] as const)
    const vs = new Set<string>()
    while (vs.size < nv) vs.add(versionString(r, source))
    versions.push([...vs])
    cum.push(nv === 1 ? [1] : nv === 2 ? [0.8, 1] : [0.7, 0.92, 1])
    const indep = /-(doc|data|common)$|^fonts-/.test(n) || r() < 0.08
    arch.push(source === 'apt' ? (indep ? 'all' : 'amd64') : indep ? 'noarch' : 'x86_64')
  }
  return { source, names, p, byRank, versions, cum, arch }
}

const pool = buildPool()
const catalogs = { apt: buildCatalog(pool, 'apt'), rpm: buildCatalog(pool, 'rpm') }
for (const c of Object.values(catalogs)) {
  const p = [...c.p]
  console.log(`[seed]   ${c.source}: ${fmt(c.names.length)} names; p>=0.99: ${p.filter((x) => x >= 0.99).length}, p>=0.5: ${p.filter((x) => x >= 0.5).length}, ` +
    `p>=0.05: ${p.filter((x) => x >= 0.05).length}, p<0.01: ${p.filter((x) => x < 0.01).length}; lib*: ${c.names.filter((n) => n.startsWith('lib')).length}`)
}
phase('name pool + catalogs')

// ---------------------------------------------------------------------------------------------------------------
// Minions

const ROLES: [string, number][] = [['web', 22], ['app', 15], ['api', 10], ['worker', 14], ['k8s-node', 16], ['db', 6], ['cache', 5], ['lb', 3], ['mq', 3], ['build', 4], ['mon', 2]]
const SITES = ['fra1', 'ams2', 'iad3', 'sfo2', 'sgp1']
interface Minion { id: string; role: string; source: 'apt' | 'rpm'; os: string; osrelease: string; osFamily: string; ip: string; salt: string; keyState: string; online: boolean; batch: number; collectedAt: number }

const BATCH = 500 // minions per inventory collection batch (as the inventory poller would batch them)
const N_BATCHES = Math.max(1, Math.ceil(N_MINIONS / BATCH))
const batchTime = (b: number) => NOW - 600_000 - (N_BATCHES - b - 1) * 2000
function buildMinions(): Minion[] {
  const r = prng(SEED, 4)
  const perRole = new Map<string, number>()
  const out: Minion[] = []
  for (let i = 0; i < N_MINIONS; i++) {
    const role = weighted(r, ROLES)
    const n = (perRole.get(role) ?? 0) + 1
    perRole.set(role, n)
    const id = `${role}-${String(n).padStart(5, '0')}.${pick(r, SITES)}`
    const apt = r() < 0.7
    const [os, osrelease] = apt ? pick(r, [['Debian', '12'], ['Ubuntu', '22.04'], ['Ubuntu', '24.04']] as const) : pick(r, [['Rocky', '9.4'], ['AlmaLinux', '9.4'], ['CentOS Stream', '9']] as const)
    const osFamily = apt ? 'Debian' : 'RedHat'
    const source = sourceOf(osFamily) as 'apt' | 'rpm'
    out.push({
      id, role, source, os, osrelease, osFamily, ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, salt: weighted(r, [['3006.9', 3], ['3007.1', 1]] as const),
      keyState: weighted(r, [['accepted', 980], ['pending', 15], ['rejected', 5]] as const), online: r() < 0.96, batch: 0, collectedAt: 0,
    })
  }
  // The last inventory refresh collected the minions in a shuffled order, in batches two seconds apart,
  // ending 10 minutes before NOW.
  const order = out.map((_, i) => i)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1))
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  order.forEach((mi, pos) => {
    out[mi]!.batch = Math.floor(pos / BATCH)
    out[mi]!.collectedAt = batchTime(out[mi]!.batch)
  })
  out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return out
}
const minions = buildMinions()
const minionIdx = new Map(minions.map((m, i) => [m.id, i]))
{
  const ins = db.prepare(`INSERT INTO minions (id, key_state, online, last_seen, os, osrelease, ip, salt_version, os_family, grains, updated_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)`)
  const r = prng(SEED, 5)
  db.transaction(() => {
    for (const m of minions) {
      const grains = {
        id: m.id, fqdn: `${m.id}.example.net`, host: m.id.split('.')[0], os: m.os, os_family: m.osFamily, osrelease: m.osrelease, kernel: 'Linux',
        saltversion: m.salt, ipv4: ['127.0.0.1', m.ip], num_cpus: pick(r, [2, 4, 8, 16, 32]), mem_total: pick(r, [3936, 7953, 15991, 32090, 64222]),
        roles: [m.role], cpuarch: 'x86_64', virtual: pick(r, ['kvm', 'VMware', 'physical']),
      }
      const lastSeen = m.online ? NOW - pickInt(r, 0, 120_000) : NOW - pickInt(r, 3_600_000, 7 * DAY)
      ins.run(m.id, m.keyState, m.online ? 1 : 0, lastSeen, m.os, m.osrelease, m.ip, m.salt, m.osFamily, JSON.stringify(grains), NOW)
    }
  })()
}
phase(`minions (${fmt(N_MINIONS)})`)

// ---------------------------------------------------------------------------------------------------------------
// Package sets, stored with their aggregates by the service's own writer

/** One minion's package set as (name index, version index) pairs in name order. Deterministic per minion. */
function packageSetOf(mi: number): { names: Int32Array; vers: Int8Array } {
  const m = minions[mi]!
  const c = catalogs[m.source]
  const r = prng(SEED ^ 0x5bd1e995, 1000 + mi)
  const n = c.names.length
  const sel = new Uint8Array(n)
  let count = 0
  const p = c.p
  for (let i = 0; i < n; i++) if (r() < p[i]!) {
    sel[i] = 1
    count++
  }
  // Fix the size to exactly N_PKGS: drop random optional names, or add names by popularity-weighted retries.
  while (count > N_PKGS) {
    const i = Math.floor(r() * n)
    if (sel[i] && p[i]! < 1) {
      sel[i] = 0
      count--
    }
  }
  while (count < N_PKGS) {
    const i = c.byRank[Math.floor(Math.pow(r(), 2.2) * n)]!
    if (!sel[i]) {
      sel[i] = 1
      count++
    }
  }
  const names = new Int32Array(N_PKGS)
  const vers = new Int8Array(N_PKGS)
  let k = 0
  for (let i = 0; i < n; i++) if (sel[i]) {
    names[k] = i
    const u = r()
    const cum = c.cum[i]!
    vers[k] = u < cum[0]! ? 0 : u < (cum[1] ?? 1) ? 1 : 2
    k++
  }
  return { names, vers }
}

{
  // The inventory refresh stores each collection batch with one PackageSetWriter flush at the batch's time; so does
  // the seed, so package_keys, package_versions, package_stats and package_seen are all the writer's work.
  const writer = await PackageSetWriter.open(deps)
  /** Per source: the writer's catalog key index of (name index i, version index v) at i * 3 + v. */
  const keyIndex = Object.fromEntries((['apt', 'rpm'] as const).map((source) => {
    const c = catalogs[source]
    const out = new Int32Array(c.names.length * 3)
    c.names.forEach((name, i) => c.versions[i]!.forEach((version, v) => (out[i * 3 + v] = writer.catalog.keyOf(name, version, c.arch[i]!))))
    return [source, out]
  })) as Record<'apt' | 'rpm', Int32Array>
  const byBatch: number[][] = Array.from({ length: N_BATCHES }, () => [])
  minions.forEach((m, mi) => byBatch[m.batch]!.push(mi))
  let rows = 0
  let lastReport = performance.now()
  for (let b = 0; b < N_BATCHES; b++) {
    for (const mi of byBatch[b]!) {
      const m = minions[mi]!
      const set = packageSetOf(mi)
      const ki = keyIndex[m.source]
      writer.add(m.id, m.source, set.names.map((i, k) => ki[i * 3 + set.vers[k]!]!))
    }
    rows += await writer.flush(batchTime(b))
    if (performance.now() - lastReport > 30_000) {
      lastReport = performance.now()
      console.log(`[seed]   package sets: ${fmt(rows)} rows (${Math.round(rows / ((performance.now() - tPhase) / 1000))} rows/s)`)
    }
  }
  const n = db.query<{ k: number; s: number; v: number; e: number }, []>(`SELECT (SELECT count(*) FROM package_keys) AS k, (SELECT count(*) FROM package_stats) AS s,
    (SELECT count(*) FROM package_versions) AS v, (SELECT count(*) FROM package_seen) AS e`).get()!
  phase(`package sets (${fmt(rows)} rows, ${fmt(n.k)} keys; ${fmt(n.s)} stats, ${fmt(n.v)} versions, ${fmt(n.e)} seen)`)
}

/** The stored rows of some minions, [minion_id, name, version, arch, source], read back through package_keys. */
const keyRows = new Map<number, [string, string, string]>()
function storedRows(ids: string[]): string[][] {
  if (!keyRows.size) for (const [id, name, version, arch] of db.query<any, []>('SELECT id, name, version, arch FROM package_keys').values() as any[][]) keyRows.set(id, [name, version, arch])
  const q = db.query<{ minion_id: string; source: string; keys: Uint8Array }, [string]>('SELECT minion_id, source, keys FROM minion_package_sets WHERE minion_id = ?1')
  const out: string[][] = []
  for (const id of ids) {
    const s = q.get(id)
    if (s) for (const k of decodeKeyIds(s.keys)) out.push([s.minion_id, ...keyRows.get(k)!, s.source])
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Verification of the writer's aggregates, against a recount of the stored sets by the rules they must follow:
//  package_versions(source, …) = minions holding that row (per source only);
//  package_stats(source, name).minion_count = minions holding the name in that source, ('' …) = sum over sources;
//  version_count = distinct versions held of that (source, name), of every source for '';
//  package_seen(source, name, seen_at).n = minions holding the name whose latest collection was at seen_at;
//  last_seen = the latest collection of a minion holding the name in that source; '' = the latest over the sources.

type AggRow = string
function snapshot(): { stats: Map<string, AggRow>; versions: Map<string, number>; seen: Map<string, number> } {
  const stats = new Map<string, AggRow>()
  for (const r of db.query<any, []>('SELECT source, name, minion_count, version_count, last_seen FROM package_stats').values() as any[][])
    stats.set(`${r[0]}\0${r[1]}`, `${r[2]}/${r[3]}/${r[4]}`)
  const versions = new Map<string, number>()
  for (const r of db.query<any, []>('SELECT source, name, version, arch, minion_count FROM package_versions').values() as any[][])
    versions.set(`${r[0]}\0${r[1]}\0${r[2]}\0${r[3]}`, r[4])
  const seen = new Map<string, number>()
  for (const r of db.query<any, []>('SELECT source, name, seen_at, n FROM package_seen').values() as any[][])
    seen.set(`${r[0]}\0${r[1]}\0${r[2]}`, r[3])
  return { stats, versions, seen }
}
function diff<V>(a: Map<string, V>, b: Map<string, V>, max = 5): string[] {
  const out: string[] = []
  for (const [k, v] of a) if (b.get(k) !== v) out.push(`${k.replaceAll('\0', '|')}: ${v} -> ${b.get(k)}`)
  for (const [k, v] of b) if (!a.has(k)) out.push(`${k.replaceAll('\0', '|')}: (none) -> ${v}`)
  return out.slice(0, max).concat(out.length > max ? [`… ${out.length - max} more`] : [])
}
const fail = (msg: string): never => {
  console.error(`[seed] VERIFY FAILED: ${msg}`)
  process.exit(1)
}

{
  // (1) Independent recount from the stored rows (and the collection times the seed gave each batch).
  const sampleNames = new Set<string>()
  if (VERIFY === 'sample') {
    const r = prng(SEED, 6)
    for (const c of Object.values(catalogs)) {
      for (let k = 0; k < 20; k++) sampleNames.add(c.names[c.byRank[k]!]!)
      for (let k = 0; k < 80; k++) sampleNames.add(c.names[Math.floor(r() * c.names.length)]!)
    }
  }
  const ver = new Map<string, number>()
  const nameCnt = new Map<string, number>()
  const lastMinion = new Map<string, string>()
  const seen = new Map<string, number>()
  const seenAt = new Map<string, number>()
  let scanned = 0
  for (let s = 0; s < minions.length; s += 200) {
    const rows = storedRows(minions.slice(s, s + 200).map((m) => m.id))
    scanned += rows.length
    for (const [mid, name, version, arch, source] of rows) {
      if (sampleNames.size && !sampleNames.has(name!)) continue
      const vk = `${source}\0${name}\0${version}\0${arch}`
      ver.set(vk, (ver.get(vk) ?? 0) + 1)
      const nk = `${source}\0${name}`
      const t = minions[minionIdx.get(mid!)!]!.collectedAt
      if (lastMinion.get(nk) !== mid) {
        lastMinion.set(nk, mid!)
        nameCnt.set(nk, (nameCnt.get(nk) ?? 0) + 1)
        const sk = `${nk}\0${t}`
        seenAt.set(sk, (seenAt.get(sk) ?? 0) + 1)
      }
      if (t > (seen.get(nk) ?? 0)) seen.set(nk, t)
    }
  }
  if (scanned !== N_MINIONS * N_PKGS) fail(`the package sets hold ${scanned} rows, expected ${N_MINIONS * N_PKGS}`)
  // version_count with the service's rules: distinct version strings per source, and over all sources for ''.
  const distinct = new Map<string, Set<string>>()
  for (const k of ver.keys()) {
    const [source, name, version] = k.split('\0')
    for (const nk of [`${source}\0${name}`, `\0${name}`]) {
      if (!distinct.has(nk)) distinct.set(nk, new Set())
      distinct.get(nk)!.add(version!)
    }
  }
  for (const [k, n] of [...nameCnt]) {
    const name = k.split('\0')[1]
    nameCnt.set(`\0${name}`, (nameCnt.get(`\0${name}`) ?? 0) + n)
    seen.set(`\0${name}`, Math.max(seen.get(`\0${name}`) ?? 0, seen.get(k)!))
  }
  const expectStats = new Map<string, string>()
  for (const [k, n] of nameCnt) expectStats.set(k, `${n}/${distinct.get(k)!.size}/${seen.get(k)}`)
  const snap = snapshot()
  const keep = (k: string) => !sampleNames.size || sampleNames.has(k.split('\0')[1]!)
  const gotStats = new Map([...snap.stats].filter(([k]) => keep(k)))
  const gotVers = new Map([...snap.versions].filter(([k]) => keep(k)))
  const gotSeen = new Map([...snap.seen].filter(([k]) => keep(k)))
  const d1 = diff(expectStats, gotStats), d2 = diff(ver, gotVers), d3 = diff(seenAt, gotSeen)
  if (d1.length || d2.length || d3.length) fail(`aggregates differ from a recount of the stored sets:\n  ${[...d1, ...d2, ...d3].join('\n  ')}`)
  console.log(`[seed]   recount (${VERIFY}): ${fmt(scanned)} rows read back; ${fmt(gotStats.size)} package_stats, ${fmt(gotVers.size)} package_versions and ${fmt(gotSeen.size)} package_seen rows match`)
  phase(`verify: recount (${VERIFY})`)

  // (2) The service itself: replay the last collection batch with the same sets (no change), then remove and
  // re-add a few of its minions (aggregates must come back exactly).
  const last = Math.max(...minions.map((m) => m.collectedAt))
  const lastBatch = minions.filter((m) => m.collectedAt === last)
  const probe = [...lastBatch.filter((m) => m.source === 'apt').slice(0, 3), ...lastBatch.filter((m) => m.source === 'rpm').slice(0, 2)]
  const setOf = (m: Minion): PackageSet => ({
    minionId: m.id, source: m.source,
    packages: storedRows([m.id]).map(([, name, version, arch]) => ({ name: name!, version: version!, arch: arch! })),
  })
  const rowsOf = (ids: string[]) => ids.map((id) => storedRows([id]).map((r) => r.slice(1).join(',')).sort().join(';')).join('\n')
  // The stored rows must equal what the generator produces for that minion.
  for (const m of probe) {
    const c = catalogs[m.source]
    const gen = packageSetOf(minionIdx.get(m.id)!)
    const want = [...gen.names].map((i, k) => `${c.names[i]},${c.versions[i]![gen.vers[k]!]},${c.arch[i]},${m.source}`).sort().join(';')
    if (rowsOf([m.id]) !== want) fail(`stored rows of ${m.id} differ from the generated set`)
  }
  const full = snapshot()
  const sets = lastBatch.map(setOf)
  const rowsBefore = rowsOf(lastBatch.map((m) => m.id))
  await replacePackageSets(deps, sets, last)
  let after = snapshot()
  const r1 = [...diff(full.stats, after.stats), ...diff(full.versions, after.versions), ...diff(full.seen, after.seen)]
  if (r1.length) fail(`replacePackageSets with the same sets changed the aggregates:\n  ${r1.join('\n  ')}`)
  if (rowsOf(lastBatch.map((m) => m.id)) !== rowsBefore) fail('replacePackageSets with the same sets changed the stored sets')
  const probeSets = probe.map(setOf)
  await replacePackageSets(deps, probe.map((m) => ({ minionId: m.id, source: m.source, packages: [] })), last)
  after = snapshot()
  const removed = diff(full.stats, after.stats, 1e9).length
  if (!removed) fail('removing minions did not change the aggregates')
  await replacePackageSets(deps, probeSets, last)
  after = snapshot()
  const r2 = [...diff(full.stats, after.stats), ...diff(full.versions, after.versions), ...diff(full.seen, after.seen)]
  if (r2.length) fail(`remove + re-add through replacePackageSets did not restore the aggregates:\n  ${r2.join('\n  ')}`)
  console.log(`[seed]   replacePackageSets: replay of the last batch (${lastBatch.length} minions) changed nothing; remove/re-add of ${probe.length} minions (${removed} stats rows touched) restored every aggregate`)
  phase('verify: replacePackageSets')
}

// ---------------------------------------------------------------------------------------------------------------
// State runs

{
  const r = prng(SEED, 7)
  const byRole = new Map<string, number[]>()
  minions.forEach((m, i) => {
    if (!byRole.has(m.role)) byRole.set(m.role, [])
    byRole.get(m.role)!.push(i)
  })
  // Each role has its own scheduled state job, N_RUNS times over the window; every minion of the role returns.
  const usedJids = new Set<string>()
  const jobs: { role: string; start: number; jid: string; fun: string; states: number }[] = []
  for (const role of byRole.keys()) {
    const offset = r()
    const states = pickInt(r, 25, 180)
    for (let j = 0; j < N_RUNS; j++) {
      const start = Math.round(NOW - WINDOW + ((j + offset) * WINDOW) / N_RUNS - 300_000)
      jobs.push({ role, start, jid: '', fun: r() < 0.6 ? 'state.highstate' : 'state.apply', states })
    }
  }
  jobs.sort((a, b) => a.start - b.start)
  for (const j of jobs) j.jid = jidOf(j.start, usedJids, r)
  const ins = db.prepare(`INSERT INTO runs (id, minion_id, jid, fun, completed_at, pass_count, fail_count, change_count, total_count, duration_ms, blocked, status)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)`)
  const statusCount: Record<string, number> = {}
  let n = 0
  // A minion's health drifts: some minions fail often.
  const flaky = new Float64Array(minions.length).map(() => (r() < 0.05 ? 0.5 : 0.04))
  for (let s = 0; s < jobs.length; s += 20) {
    db.transaction(() => {
      for (const job of jobs.slice(s, s + 20)) {
        for (const mi of byRole.get(job.role)!) {
          const u = r()
          const status = u < 0.015 ? 'blocked' : u < 0.015 + flaky[mi]! * 0.5 ? 'unhealthy' : u < 0.3 ? 'changed' : 'healthy'
          const total = status === 'blocked' ? 0 : job.states + pickInt(r, -2, 2)
          const fail = status === 'unhealthy' ? pickInt(r, 1, 6) : 0
          const change = status === 'changed' ? pickInt(r, 1, 8) : status === 'unhealthy' ? pickInt(r, 0, 3) : 0
          const duration = status === 'blocked' ? 0 : Math.round(total * (80 + r() * 400) + change * 2000)
          const completed = job.start + Math.max(duration, 500) + pickInt(r, 200, 5000)
          ins.run(uuid7(completed, r), minions[mi]!.id, job.jid, job.fun, completed, status === 'blocked' ? 0 : total - fail, fail, change, total, duration, status === 'blocked' ? 1 : 0, status)
          statusCount[status] = (statusCount[status] ?? 0) + 1
          n++
        }
      }
    })()
  }
  // What recordRun keeps per minion: run_count, and the last run = the head of the run list (completed_at desc, jid desc).
  db.exec(`UPDATE minions SET run_count = (SELECT count(*) FROM runs WHERE runs.minion_id = minions.id),
    (last_run_status, last_run_completed_at) = (SELECT status, completed_at FROM runs WHERE runs.minion_id = minions.id ORDER BY completed_at DESC, jid DESC LIMIT 1)`)
  const bad = db.query<{ n: number }, []>('SELECT count(*) AS n FROM minions WHERE run_count <> ' + N_RUNS).get()!.n
  if (bad) fail(`${bad} minions have run_count <> ${N_RUNS}`)
  phase(`runs (${fmt(n)}: ${Object.entries(statusCount).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')})`)
}

// ---------------------------------------------------------------------------------------------------------------
// Activity events (last, so that the "last 60 minutes" are as fresh as possible when the load starts)

{
  const r = prng(SEED, 8)
  interface Ev { ts: number; category: string; type: string; minion: string | null; jid: string | null; fun: string | null; success: number | null; changed: number | null; initiator: string | null; target: string | null; duration: number | null; summary: string }
  const evs: Ev[] = []
  const recentTarget = Math.round(N_EVENTS * 0.002)
  const byRole = new Map<string, string[]>()
  for (const m of minions) {
    if (!byRole.has(m.role)) byRole.set(m.role, [])
    byRole.get(m.role)!.push(m.id)
  }
  const roleNames = [...byRole.keys()]
  const usedJids = new Set<string>()
  const FUNS: [string, number][] = [['state.apply', 26], ['test.ping', 18], ['cmd.run', 16], ['state.highstate', 7], ['state.sls', 6], ['pkg.upgrade', 4], ['grains.items', 5], ['service.restart', 5], ['saltutil.sync_all', 5], ['pkg.list_pkgs', 4], ['file.manage_file', 2], ['disk.usage', 2]]
  const STATE_FUNS = new Set(['state.apply', 'state.highstate', 'state.sls'])
  const USERS: [string, number][] = [['admin', 3], ['alice', 3], ['bob', 2], ['carol', 2], ['deploy-bot', 5], ['jenkins', 4], ['saltdeck', 1]]
  /** A group start time: mild day/night rhythm over the window, or within the last hour. */
  const startTime = (recent: boolean) => {
    if (recent) return NOW - pickInt(r, 60_000, 3_540_000)
    for (;;) {
      const t = NOW - r() * WINDOW
      const hour = new Date(t).getUTCHours()
      if (r() < 0.55 + 0.45 * Math.sin(((hour - 6) / 24) * 2 * Math.PI)) return t
    }
  }
  const generate = (recent: boolean, budget: number) => {
    let made = 0
    while (made < budget) {
      const t = Math.round(startTime(recent))
      const u = r()
      // Group odds chosen so that events come out about 88% job, 4% key, 8% minion (a job group averages ~8 events).
      if (u < 0.47) {
        // A job: job.new, then one job.ret per targeted minion.
        const fun = weighted(r, FUNS)
        const user = weighted(r, USERS)
        const role = pick(r, roleNames)
        const pool = byRole.get(role)!
        let targets: string[], tgt: string
        const shape = r()
        if (shape < 0.45) {
          targets = [pick(r, pool)]
          tgt = targets[0]!
        } else {
          const k = Math.min(pool.length, shape < 0.9 ? pickInt(r, 2, 12) : pickInt(r, 13, 60))
          const at = Math.floor(r() * Math.max(1, pool.length - k))
          targets = pool.slice(at, at + k)
          tgt = shape < 0.8 ? `${role}*` : `G@roles:${role}`
        }
        const jid = jidOf(t, usedJids, r)
        evs.push({ ts: t, category: 'job', type: 'job.new', minion: null, jid, fun, success: null, changed: null, initiator: user, target: tgt, duration: null,
          summary: `${fun} dispatched to ${tgt} (${targets.length} minion${targets.length === 1 ? '' : 's'})` })
        for (const mid of targets) {
          const isState = STATE_FUNS.has(fun)
          const ok = r() < 0.93
          const total = isState ? pickInt(r, 5, 120) : 0
          const failed = isState && !ok ? pickInt(r, 1, 4) : 0
          const changed = isState ? (r() < 0.3 ? pickInt(r, 1, 10) : 0) : 0
          const dur = isState ? Math.round(total * (50 + r() * 300)) : null
          const ts = Math.min(NOW, t + pickInt(r, 150, 20_000) + (dur ?? 0))
          evs.push({ ts, category: 'job', type: 'job.ret', minion: mid, jid, fun, success: ok ? 1 : 0, changed: isState ? (changed > 0 ? 1 : 0) : null, initiator: user, target: tgt, duration: dur,
            summary: isState ? `${mid} returned ${fun}: ${total - failed} ok, ${failed} failed, ${changed} changed` : `${mid} returned ${fun}` })
        }
        made += 1 + targets.length
      } else if (u < 0.65) {
        const mid = pick(r, minions).id
        const type = weighted(r, [['key.pend', 3], ['key.accept', 4], ['key.reject', 1], ['key.delete', 1]] as const)
        const word = { 'key.pend': 'pending', 'key.accept': 'accepted', 'key.reject': 'rejected', 'key.delete': 'deleted' }[type]
        evs.push({ ts: t, category: 'key', type, minion: mid, jid: null, fun: null, success: null, changed: null, initiator: type === 'key.pend' ? null : r() < 0.6 ? weighted(r, USERS) : null, target: null, duration: null, summary: `${mid} key ${word}` })
        made++
      } else {
        const mid = pick(r, minions).id
        const type = weighted(r, [['minion.start', 3], ['minion.online', 4], ['minion.offline', 4]] as const)
        const summary = type === 'minion.start' ? `${mid} started` : type === 'minion.online' ? `${mid} is online` : `${mid} is offline`
        evs.push({ ts: t, category: 'minion', type, minion: mid, jid: null, fun: null, success: null, changed: null, initiator: null, target: null, duration: null, summary })
        made++
      }
    }
    return made
  }
  generate(true, recentTarget)
  generate(false, N_EVENTS - evs.length)
  evs.length = N_EVENTS // the last group may overshoot by a few returns
  // Insertion order = arrival order (time order): ids follow ts as the batched stream writer leaves them.
  evs.sort((a, b) => a.ts - b.ts)
  const ROWS = 50
  const one = '(?,?,?,?,?,?,?,?,?,?,?,?)'
  const sql = (k: number) => `INSERT INTO activity_events (ts, category, event_type, minion_id, jid, fun, success, changed, initiator, target, duration_ms, summary) VALUES ${Array(k).fill(one).join(',')}`
  const insMany = db.prepare(sql(ROWS))
  const insOne = db.prepare(sql(1))
  const counts: Record<string, number> = {}
  const row = (e: Ev) => [e.ts, e.category, e.type, e.minion, e.jid, e.fun, e.success, e.changed, e.initiator, e.target, e.duration, e.summary]
  for (let s = 0; s < evs.length; s += 50_000) {
    db.transaction(() => {
      const end = Math.min(evs.length, s + 50_000)
      let i = s
      for (; i + ROWS <= end; i += ROWS) insMany.run(...evs.slice(i, i + ROWS).flatMap(row))
      for (; i < end; i++) insOne.run(...row(evs[i]!))
      for (let k = s; k < end; k++) counts[evs[k]!.category] = (counts[evs[k]!.category] ?? 0) + 1
    })()
  }
  const upCount = db.prepare('INSERT INTO activity_counts (category, n) VALUES (?1, ?2) ON CONFLICT (category) DO UPDATE SET n = n + excluded.n')
  db.transaction(() => {
    for (const [c, n] of Object.entries(counts)) upCount.run(c, n)
  })()
  // Check the counters against the rows (what recordEvents would have left).
  const real = db.query<{ category: string; n: number }, []>('SELECT category, count(*) AS n FROM activity_events GROUP BY category').all()
  const stored = db.query<{ category: string; n: number }, []>('SELECT category, n FROM activity_counts').all()
  if (JSON.stringify(real.sort((a, b) => a.category.localeCompare(b.category))) !== JSON.stringify(stored.sort((a, b) => a.category.localeCompare(b.category))))
    fail(`activity_counts ${JSON.stringify(stored)} != ${JSON.stringify(real)}`)
  // The search index, filled in bulk behind its watermark exactly as the ingest does; then one cross-check of the
  // service's search total (index + unindexed tail) against a plain LIKE count.
  let indexed = 0
  for (let n; (n = await indexActivity(deps, 500_000)) > 0; ) indexed += n
  const adminId = db.query<{ id: string }, []>("SELECT id FROM users WHERE username_key = 'admin'").get()!.id
  const viaService = (await listEvents(deps, { search: 'web' }, await grantsOf(deps, adminId), 1, 0)).total
  const viaLike = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM activity_events WHERE summary LIKE '%web%' OR minion_id LIKE '%web%' OR fun LIKE '%web%' OR initiator LIKE '%web%' OR target LIKE '%web%'`).get()!.n
  if (viaService !== viaLike) fail(`search total for "web": service ${viaService}, LIKE ${viaLike}`)
  console.log(`[seed]   search index: ${fmt(indexed)} events indexed; search=web total ${fmt(viaService)} equals the LIKE count`)
  const lastHour = db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM activity_events WHERE ts >= ?1').get(NOW - 3_600_000)!.n
  phase(`activity (${fmt(evs.length)}: ${Object.entries(counts).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}; ${fmt(lastHour)} in the last 60 min)`)
}

// ---------------------------------------------------------------------------------------------------------------
// Restore the service's journal settings and report

db.exec('PRAGMA foreign_keys = ON')
db.exec('PRAGMA journal_mode = WAL')
db.exec('PRAGMA synchronous = NORMAL')
db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
const integrity = db.query<{ quick_check: string }, []>('PRAGMA quick_check(1)').get()!
const mode = db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()!.journal_mode
db.close()
phase(`restore WAL + quick_check (${integrity.quick_check})`)
const size = statSync(join(DATA_DIR, 'saltdeck.db')).size
const info = {
  seeded_at: new Date(NOW).toISOString(), now_ms: NOW, admin_user: 'admin', admin_password: ADMIN_PASSWORD,
  params: { minions: N_MINIONS, packages: N_PKGS, events: N_EVENTS, runs: N_RUNS, pool: POOL, seed: SEED, verify: VERIFY },
  minion_ids_sample: minions.filter((_, i) => i % Math.max(1, Math.floor(N_MINIONS / 20)) === 0).map((m) => m.id),
  timings_s: timings, total_s: Math.round(performance.now() - t0) / 1000, db_bytes: size, journal_mode: mode, quick_check: integrity.quick_check,
}
writeFileSync(join(DATA_DIR, 'bench-info.json'), JSON.stringify(info, null, 2) + '\n')
// Minion ids for the runs load script (one per line).
writeFileSync(join(DATA_DIR, 'minion-ids.txt'), minions.map((m) => m.id).join('\n') + '\n')
console.log(`[seed] done in ${info.total_s.toFixed(1)} s; saltdeck.db ${(size / 2 ** 30).toFixed(2)} GiB (${fmt(size)} bytes), journal_mode=${mode}`)
