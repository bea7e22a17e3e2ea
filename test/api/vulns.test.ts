// Proves contract §12: the holder index and version queries against a model of the stored sets, OSV feed import
// (JSON, zip, broken, re-import, withdrawn, other ecosystems), findings kept current as sets, grains and sources change,
// the reads, permissions, audit, and the vulnerable alert kind firing from findings.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { call, testWorld } from '../helpers/app'
import { replacePackageSets, type PackageSet } from '../../src/features/inventory/service'
import { emptyBits, orHolders, countBits, hasBit } from '../../src/features/inventory/holders'
import { recordGrains } from '../../src/features/minions/service'
import { watchGrains } from '../../src/features/vulns/watch'
import { compareDpkg } from '../../src/lib/version-order'
import { learnSources } from '../../src/features/inventory/sources'
import { watchTime } from '../../src/features/alerts/watch'
import { FakeSalt } from '../helpers/fake-salt'
import { SaltClient } from '../../src/salt/client'
import { sql } from '../../src/db/sql'
import { minions, packageHolders, packageKeys } from '../../src/db/schema'
import { setsByMinion } from '../../src/features/inventory/holder-store'

type World = Awaited<ReturnType<typeof testWorld>>

const set = (minionId: string, pkgs: Record<string, string>, source = 'apt'): PackageSet => ({
  minionId, source, packages: Object.entries(pkgs).map(([name, version]) => ({ name, version, arch: 'amd64' })),
})
const debian = (w: World, ids: string[], major = 12) =>
  recordGrains(w.deps, ids.map((id) => ({ id, grains: { os: 'Debian', os_family: 'Debian', osrelease: `${major}.5`, osmajorrelease: major } })))

/** An OSV record for Debian:12 (or `eco`) with one ECOSYSTEM range of the given events. */
const rec = (id: string, pkg: string, events: Record<string, string>[], extra: Record<string, unknown> = {}, eco = 'Debian:12') => ({
  id, summary: `${id} in ${pkg}`, aliases: [`CVE-${id}`], affected: [{ package: { ecosystem: eco, name: pkg }, ranges: [{ type: 'ECOSYSTEM', events }] }], ...extra,
})

const importJson = (w: World, records: unknown, who: 'admin' | 'viewer' | 'operator' = 'admin') => call(w, 'POST', '/api/vulns/import', { who, body: records })
const vulns = async (w: World, q = '') => (await call(w, 'GET', `/api/vulns${q}`, { who: 'viewer' })).body as { total: number; vulns: { id: string; minion_count: number; severity: string; fixed_versions: string[]; packages: string[] }[] }
const countOf = async (w: World, id: string) => (await vulns(w, '?include_unaffected=true&limit=500')).vulns.find((v) => v.id === id)?.minion_count

describe('holder index', () => {
  test('who holds each key follows every replacement, as a model of the stored sets says (array and bitmap chunks)', async () => {
    const w = await testWorld()
    const model = new Map<string, Map<string, string>>()
    let seed = 7
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let round = 0; round < 6; round++) {
      const sets: PackageSet[] = []
      // 600 minions: "common" is held by most (a bitmap chunk), the others by few (array chunks).
      for (let i = 0; i < 600; i++) {
        if (round > 0 && rnd(3)) continue
        const pkgs: Record<string, string> = {}
        if (rnd(10) < 8) pkgs.common = `1.${rnd(2)}`
        for (let p = 0; p < 5; p++) if (rnd(4) === 0) pkgs[`p${p}`] = `${rnd(3)}.0`
        sets.push(set(`m-${String(i).padStart(4, '0')}`, pkgs))
        model.set(`m-${String(i).padStart(4, '0')}`, new Map(Object.entries(pkgs)))
      }
      await replacePackageSets(w.deps, sets)
    }
    const db = w.deps.db
    const keys = await db.rows<{ id: number; name: string; version: string }>(sql`SELECT ${packageKeys.id}, ${packageKeys.name}, ${packageKeys.version} FROM ${packageKeys}`)
    const nums = new Map((await setsByMinion(db)).map((r) => [r.minion_id, r.num]))
    expect(keys.length).toBeGreaterThan(10)
    for (const k of keys) {
      const bits = await emptyBits(w.deps.db)
      await orHolders(w.deps.db, k.id, bits)
      const want = [...model].filter(([, p]) => p.get(k.name) === k.version).map(([id]) => id)
      expect(countBits(bits)).toBe(want.length)
      for (const id of want) expect(hasBit(bits, nums.get(id)!)).toBeTruthy()
    }
    // The common key's chunk is a bitmap (> 255 holders), a rare one's an array of offsets.
    const sizes = (await db.rows<{ n: number }>(sql`SELECT length(${packageHolders.bits}) AS n FROM ${packageHolders}`)).map((r) => r.n)
    expect(sizes).toContain(512)
    expect(sizes.some((n) => n < 512 && n % 2 === 0)).toBe(true)
  })
})

describe('version queries', () => {
  test('GET /api/inventory/packages/{name}/minions lists holders by minion id, filtered in dpkg order', async () => {
    const w = await testWorld()
    const versions = ['3.0.11-1~deb12u1', '3.0.11-1~deb12u2', '3.0.9-1', '3.0.11-1', '1:1.0-1', '3.0.11~rc1-1', '3.0.13-1~deb12u1']
    const sets = Array.from({ length: 40 }, (_, i) => set(`n${String(39 - i).padStart(2, '0')}`, { openssl: versions[i % versions.length]!, zlib1g: '1:1.2.13.dfsg-1' }))
    await replacePackageSets(w.deps, sets)
    const holders = new Map(sets.map((s) => [s.minionId, s.packages[0]!.version]))
    for (const [op, test_] of Object.entries({ lt: (c: number) => c < 0, le: (c: number) => c <= 0, eq: (c: number) => c === 0, ne: (c: number) => c !== 0, ge: (c: number) => c >= 0, gt: (c: number) => c > 0 })) {
      const pivot = '3.0.11-1~deb12u1'
      const r = await call(w, 'GET', `/api/inventory/packages/openssl/minions?op=${op}&version=${encodeURIComponent(pivot)}&limit=1000`, { who: 'viewer' })
      expect(r.status).toBe(200)
      const want = [...holders].filter(([, v]) => test_(compareDpkg(v, pivot))).map(([id]) => id).sort()
      expect(r.body.total).toBe(want.length)
      expect(r.body.minions.map((m: { minion_id: string }) => m.minion_id)).toEqual(want)
    }
    const all = await call(w, 'GET', '/api/inventory/packages/openssl/minions?limit=5&offset=3', { who: 'viewer' })
    expect(all.body.total).toBe(40)
    expect(all.body.minions.map((m: { minion_id: string }) => m.minion_id)).toEqual(['n03', 'n04', 'n05', 'n06', 'n07'])
    expect(all.body.minions[0]).toEqual({ minion_id: 'n03', package: 'openssl', version: holders.get('n03'), arch: 'amd64', source: 'apt', salt_source: 'default' })
    expect((await call(w, 'GET', '/api/inventory/packages/openssl/minions?source=rpm', { who: 'viewer' })).body.total).toBe(0)
    expect((await call(w, 'GET', '/api/inventory/packages/nope/minions', { who: 'viewer' })).status).toBe(404)
    const bad = await call(w, 'GET', '/api/inventory/packages/openssl/minions?op=lt', { who: 'viewer' })
    expect(bad.status).toBe(422)
    expect(bad.body.detail).toEqual([{ type: 'value_error', loc: ['query', 'version'], msg: 'Value error, op and version go together', ctx: { error: {} } }])
    expect((await call(w, 'GET', '/api/inventory/packages/openssl/minions?version=1', { who: 'viewer' })).body.detail[0].loc).toEqual(['query', 'op'])
    expect((await call(w, 'GET', '/api/inventory/packages/openssl/minions?op=lt&version=1', { who: 'nobody' })).status).toBe(403)
  })

  test('a version the package system would not take is 422, not an answer (issue 23 item 2)', async () => {
    const w = await testWorld()
    await replacePackageSets(w.deps, [set('deb', { openssl: '3.0.11-1~deb12u1' }), set('rh', { openssl: '3.0.7-24.el9' }, 'rpm')])
    const ask = (version: string, source = '') => call(w, 'GET', `/api/inventory/packages/openssl/minions?op=lt&version=${encodeURIComponent(version)}${source ? `&source=${source}` : ''}`, { who: 'viewer' })
    for (const [version, source] of [['not a version!!', ''], ['not a version!!', 'rpm'], ['abc', 'apt'], ['1.0-1-', 'apt'], ['3.0 beta', 'rpm']]) {
      const r = await ask(version!, source)
      expect({ version, source, status: r.status, loc: r.body.detail?.[0]?.loc, input: r.body.detail?.[0]?.input }).toEqual({ version, source, status: 422, loc: ['query', 'version'], input: version })
    }
    expect((await ask('not a version!!')).body.detail[0].msg).toContain('not a Debian version')
    expect((await ask('3.0.12-1', 'apt')).body.minions.map((m: { minion_id: string }) => m.minion_id)).toEqual(['deb'])
    expect((await ask('1:3.0.0-1', 'rpm')).body.minions.map((m: { minion_id: string }) => m.minion_id)).toEqual(['rh'])
    // A version only the other package system refuses is fine when the query is held to one source.
    expect((await ask('3.0.8_1', 'rpm')).status).toBe(200)
    expect((await ask('3.0.8_1')).status).toBe(422)
  })
})

/** Three Debian 12 minions, one Ubuntu 22.04 minion, and one whose grains have not arrived. */
async function fleet() {
  const w = await testWorld()
  await debian(w, ['deb-a', 'deb-b', 'deb-c'])
  await recordGrains(w.deps, [{ id: 'ubu-a', grains: { os: 'Ubuntu', os_family: 'Debian', osrelease: '22.04', osmajorrelease: 22 } }])
  await replacePackageSets(w.deps, [
    set('deb-a', { openssl: '3.0.11-1~deb12u1', libssl3: '3.0.11-1~deb12u1', curl: '7.88.1-10+deb12u4' }),
    set('deb-b', { openssl: '3.0.13-1~deb12u1', curl: '7.88.1-10+deb12u5' }),
    set('deb-c', { openssl: '3.0.9-1', bash: '5.2.15-2+b2' }),
    set('ubu-a', { openssl: '3.0.2-0ubuntu1.10' }),
    set('late', { openssl: '3.0.9-1' }),
  ])
  return w
}

const FEED = [
  rec('DSA-1', 'openssl', [{ introduced: '0' }, { fixed: '3.0.13-1~deb12u1' }], { database_specific: { severity: 'high' } }),
  rec('DSA-2', 'openssl', [{ introduced: '3.0.10-1' }, { last_affected: '3.0.11-1~deb12u1' }]),
  // Two ranges: affected from 0 to 3.0.5-1, and again from 3.0.10 to 3.0.11-1~deb12u2.
  { ...rec('DSA-3', 'openssl', [{ introduced: '0' }, { fixed: '3.0.5-1' }]), affected: [{ package: { ecosystem: 'Debian:12', name: 'openssl' }, ranges: [
    { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '3.0.5-1' }] }, { type: 'ECOSYSTEM', events: [{ introduced: '3.0.10' }, { fixed: '3.0.11-1~deb12u2' }] }] }] },
  rec('DSA-4', 'curl', [{ introduced: '0' }, { fixed: '7.88.1-10+deb12u5' }], { severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }] }),
  rec('USN-1', 'openssl', [{ introduced: '0' }, { fixed: '3.0.2-0ubuntu1.12' }], {}, 'Ubuntu:22.04:LTS'),
  rec('PYSEC-1', 'requests', [{ introduced: '0' }], {}, 'PyPI'),
  { ...rec('DSA-9', 'openssl', [{ introduced: '0' }]), withdrawn: '2024-01-01T00:00:00Z' },
]

describe('vulnerabilities', () => {
  test('an import matches the fleet by ecosystem and range; the reads say who is affected and by what', async () => {
    const w = await fleet()
    const r = await importJson(w, FEED)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ records: 5, skipped: 1, withdrawn: 1 })
    expect(r.body.feeds.map((f: { ecosystem: string; records: number }) => [f.ecosystem, f.records])).toEqual([['Debian:12', 4], ['Ubuntu:22.04', 1]])
    // DSA-1: every Debian 12 minion below 3.0.13-1~deb12u1 (deb-a, deb-c); `late` has no ecosystem yet.
    expect(await countOf(w, 'DSA-1')).toBe(2)
    expect(await countOf(w, 'DSA-2')).toBe(1) // deb-a at last_affected exactly
    expect(await countOf(w, 'DSA-3')).toBe(1) // deb-a in the second range; deb-c (3.0.9-1) between the two
    expect(await countOf(w, 'DSA-4')).toBe(1)
    expect(await countOf(w, 'USN-1')).toBe(1)
    const list = await vulns(w)
    expect(list.total).toBe(5)
    // Worst first, then most minions (issue 23 item 2): the critical DSA-4 on one minion above the high DSA-1 on two.
    expect(list.vulns.map((v) => v.id)).toEqual(['DSA-4', 'DSA-1', 'USN-1', 'DSA-3', 'DSA-2'])
    expect((await vulns(w, '?sort=severity')).vulns.map((v) => v.id)).toEqual(['DSA-4', 'DSA-1', 'USN-1', 'DSA-3', 'DSA-2'])
    expect((await vulns(w, '?sort=minions')).vulns.map((v) => v.id)).toEqual(['DSA-1', 'DSA-4', 'USN-1', 'DSA-3', 'DSA-2'])
    expect((await vulns(w, '?sort=id')).vulns.map((v) => v.id)).toEqual(['DSA-1', 'DSA-2', 'DSA-3', 'DSA-4', 'USN-1'])
    expect((await call(w, 'GET', '/api/vulns?sort=worst', { who: 'viewer' })).status).toBe(422)
    expect(list.vulns.find((v) => v.id === 'DSA-1')).toMatchObject({ severity: 'high', packages: ['openssl'], fixed_versions: ['3.0.13-1~deb12u1'] })
    expect(list.vulns.find((v) => v.id === 'DSA-4')!.severity).toBe('critical') // CVSS 3.1 base 9.8, computed
    expect(list.vulns.find((v) => v.id === 'DSA-2')!.severity).toBe('unknown')
    expect((await vulns(w, '?severity=high')).vulns.map((v) => v.id)).toEqual(['DSA-1'])
    expect((await vulns(w, '?q=curl')).vulns.map((v) => v.id)).toEqual(['DSA-4'])
    expect((await vulns(w, '?package=curl')).vulns.map((v) => v.id)).toEqual(['DSA-4'])
    const one = await call(w, 'GET', '/api/vulns/DSA-1', { who: 'viewer' })
    expect(one.status).toBe(200)
    expect(one.body.minions).toEqual([
      { minion_id: 'deb-a', package: 'openssl', installed: '3.0.11-1~deb12u1', fixed: '3.0.13-1~deb12u1' },
      { minion_id: 'deb-c', package: 'openssl', installed: '3.0.9-1', fixed: '3.0.13-1~deb12u1' },
    ])
    expect((await call(w, 'GET', '/api/vulns/DSA-3', { who: 'viewer' })).body.minions).toEqual([{ minion_id: 'deb-a', package: 'openssl', installed: '3.0.11-1~deb12u1', fixed: '3.0.11-1~deb12u2' }])
    expect((await call(w, 'GET', '/api/vulns/nope', { who: 'viewer' })).status).toBe(404)
    const mine = await call(w, 'GET', '/api/minions/deb-a/vulns', { who: 'viewer' })
    expect(mine.body.ecosystem).toBe('Debian:12')
    expect(mine.body.vulns.map((v: { id: string }) => v.id)).toEqual(['DSA-4', 'DSA-1', 'DSA-2', 'DSA-3'])
    expect((await call(w, 'GET', '/api/minions/late/vulns', { who: 'viewer' })).body).toMatchObject({ ecosystem: null, total: 0 })
    expect((await call(w, 'GET', '/api/minions/ghost/vulns', { who: 'viewer' })).status).toBe(404)
    const feeds = await call(w, 'GET', '/api/vulns/feeds', { who: 'viewer' })
    expect(feeds.body.feeds.map((f: { ecosystem: string }) => f.ecosystem)).toEqual(['Debian:12', 'Ubuntu:22.04'])
    const metrics = (await call(w, 'GET', '/metrics')).body as string
    expect(metrics).toContain('saltdeck_vuln_feed_records{ecosystem="Debian:12"} 4')
    // deb-a's worst is critical (DSA-4), deb-c's high (DSA-1), ubu-a's unknown (USN-1 has no severity); deb-b has none.
    expect(metrics).toContain('saltdeck_vulnerable_minions{severity="critical"} 1')
    expect(metrics).toContain('saltdeck_vulnerable_minions{severity="high"} 1')
    expect(metrics).toContain('saltdeck_vulnerable_minions{severity="unknown"} 1')
  })

  test('a record whose texts hold a NUL imports on either engine (PostgreSQL text holds none: U+FFFD takes its place)', async () => {
    const w = await fleet()
    const r = await importJson(w, [rec('DSA-1', 'openssl', [{ introduced: '0' }], { summary: 'bad\u0000summary', details: 'x\u0000y' }), rec('DSA-2', 'curl', [{ introduced: '0' }])])
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ records: 2 })
    const one = (await call(w, 'GET', '/api/vulns/DSA-1', { who: 'viewer' })).body
    const nul = w.deps.db.engine === 'postgres' ? '\uFFFD' : '\u0000'
    expect([one.summary, one.details]).toEqual([`bad${nul}summary`, `x${nul}y`])
    expect(await countOf(w, 'DSA-1')).toBe(3)
  })

  test('findings follow the fleet: an upgrade, a new minion, grains arriving late, a release upgrade', async () => {
    const w = await fleet()
    await importJson(w, FEED)
    // deb-c upgrades openssl to the fixed version: only its changed package is re-matched and DSA-1 loses it.
    await replacePackageSets(w.deps, [set('deb-c', { openssl: '3.0.13-1~deb12u1', bash: '5.2.15-2+b2' })])
    expect(await countOf(w, 'DSA-1')).toBe(1)
    // A new Debian minion with a vulnerable curl.
    await debian(w, ['deb-d'])
    await replacePackageSets(w.deps, [set('deb-d', { curl: '7.88.1-10+deb12u1' })])
    expect(await countOf(w, 'DSA-4')).toBe(2)
    // `late` gets its grains: it joins Debian:12 and DSA-1 counts it.
    await debian(w, ['late'])
    await w.deps.db.tx((tx) => watchGrains(w.deps, tx, ['late']))
    expect(await countOf(w, 'DSA-1')).toBe(2)
    // deb-a moves to Debian 13, which has no feed: everything it had is gone.
    await debian(w, ['deb-a'], 13)
    await w.deps.db.tx((tx) => watchGrains(w.deps, tx, ['deb-a']))
    expect(await countOf(w, 'DSA-2')).toBe(0)
    expect((await call(w, 'GET', '/api/minions/deb-a/vulns', { who: 'viewer' })).body.total).toBe(0)
    // The counts kept incrementally equal a recount from scratch.
    const kept = (await vulns(w, '?include_unaffected=true')).vulns.map((v) => [v.id, v.minion_count])
    const { recountAll } = await import('../../src/features/vulns/findings')
    await w.deps.db.tx((tx) => recountAll(tx))
    expect((await vulns(w, '?include_unaffected=true')).vulns.map((v) => [v.id, v.minion_count])).toEqual(kept)
  })

  test('a re-import replaces its ecosystem; a broken file changes nothing and says why', async () => {
    const w = await fleet()
    await importJson(w, FEED)
    const before = await vulns(w, '?include_unaffected=true')
    const broken = await call(w, 'POST', '/api/vulns/import', { raw: '[{"id": "X-1"}, {"summary": "no id"}]' })
    expect(broken.status).toBe(422)
    expect(broken.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body'] })
    expect(broken.body.detail[0].msg).toContain('no valid "id"')
    expect(await vulns(w, '?include_unaffected=true')).toEqual(before)
    // Debian:12 again without DSA-2 and DSA-3: they are gone; Ubuntu's record stays.
    const again = await importJson(w, [FEED[0], FEED[3]])
    expect(again.body.feeds).toHaveLength(1)
    const ids = (await vulns(w, '?include_unaffected=true')).vulns.map((v) => v.id).sort()
    expect(ids).toEqual(['DSA-1', 'DSA-4', 'USN-1'])
    expect((await call(w, 'GET', '/api/minions/deb-a/vulns', { who: 'viewer' })).body.vulns.map((v: { id: string }) => v.id)).toEqual(['DSA-4', 'DSA-1'])
    // One id twice in an import: the later record wins whole (its ranges replace the earlier's).
    await importJson(w, [FEED[0], rec('DSA-1', 'openssl', [{ introduced: '0' }, { fixed: '3.0.10-1' }])])
    expect((await call(w, 'GET', '/api/vulns/DSA-1', { who: 'viewer' })).body.minions.map((m: { minion_id: string }) => m.minion_id)).toEqual(['deb-c'])
  })

  test('an all.zip as osv.dev publishes it imports through the API and the CLI reader; the wrong type is 415', async () => {
    const w = await fleet()
    const dir = mkdtempSync(join(tmpdir(), 'osv-'))
    for (const r of FEED.slice(0, 4)) writeFileSync(join(dir, `${r.id}.json`), JSON.stringify(r))
    const zip = join(dir, 'all.zip')
    const py = Bun.spawnSync(['python3', '-c', `import zipfile,sys,os\nwith zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED) as z:\n  [z.write(os.path.join(sys.argv[2],f),f) for f in sorted(os.listdir(sys.argv[2])) if f.endswith('.json')]`, zip, dir])
    expect(py.exitCode).toBe(0)
    const body = await Bun.file(zip).bytes()
    const res = await w.app.handle(new Request('http://localhost/api/vulns/import', { method: 'POST', headers: { authorization: `Bearer ${w.tokens.admin}`, 'content-type': 'application/zip' }, body }))
    expect(res.status).toBe(200)
    expect(((await res.json()) as { records: number }).records).toBe(4)
    expect(await countOf(w, 'DSA-1')).toBe(2)
    const wrong = await w.app.handle(new Request('http://localhost/api/vulns/import', { method: 'POST', headers: { authorization: `Bearer ${w.tokens.admin}`, 'content-type': 'text/plain' }, body: 'x' }))
    expect(wrong.status).toBe(415)
    // A transport check like JSON's 415: it comes before authentication (README, decisions).
    const anonWrong = await w.app.handle(new Request('http://localhost/api/vulns/import', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }))
    expect(anonWrong.status).toBe(415)
    expect(await anonWrong.json()).toEqual({ detail: 'Content-Type must be application/zip or application/json' })
    const notZip = await w.app.handle(new Request('http://localhost/api/vulns/import', { method: 'POST', headers: { authorization: `Bearer ${w.tokens.admin}`, 'content-type': 'application/zip' }, body: 'PK\u0003\u0004garbage' }))
    expect(notZip.status).toBe(422)
    expect(await countOf(w, 'DSA-1')).toBe(2)
  })

  test('permissions: viewers and operators read, only a manager of vuln:* imports; the import is audited', async () => {
    const w = await fleet()
    expect((await importJson(w, FEED, 'viewer')).status).toBe(403)
    expect((await importJson(w, FEED, 'operator')).status).toBe(403)
    expect((await call(w, 'GET', '/api/vulns', { who: 'operator' })).status).toBe(200)
    expect((await call(w, 'GET', '/api/vulns', { who: 'nobody' })).status).toBe(403)
    expect((await importJson(w, FEED)).status).toBe(200)
    const audit = await call(w, 'GET', '/api/audit?action=vuln.import')
    expect(audit.body.entries[0]).toMatchObject({ action: 'vuln.import', target: 'feeds', ok: true })
  })

  test('a record for the source package reaches its binaries once the source is learned from one minion', async () => {
    const salt = new FakeSalt().start()
    try {
      const w = await testWorld()
      salt.addMinions(['deb-a', 'deb-b'])
      for (const id of ['deb-a', 'deb-b']) {
        const m = salt.minions.get(id)!
        m.pkgs = { libssl3: ['3.0.11-1~deb12u1'], openssl: ['3.0.11-1~deb12u1'] }
        m.sources = { libssl3: 'openssl' }
      }
      await debian(w, ['deb-a', 'deb-b'])
      await w.deps.db.exec(sql`UPDATE ${minions} SET key_state = 'accepted', online = 1`)
      await replacePackageSets(w.deps, ['deb-a', 'deb-b'].map((id) => set(id, { libssl3: '3.0.11-1~deb12u1', openssl: '3.0.11-1~deb12u1' })))
      await importJson(w, [FEED[0]])
      const before = (await call(w, 'GET', '/api/vulns/DSA-1', { who: 'viewer' })).body.minions.map((m: { package: string }) => m.package)
      expect(before).toEqual(['openssl', 'openssl'])
      const client = new SaltClient(() => ({ url: salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret', verify: false }))
      const r = await learnSources(w.deps, client, () => `2026${Date.now()}`)
      expect(r).toMatchObject({ keys: 2, learned: 2, minions: 1, calls: 1 })
      const after = (await call(w, 'GET', '/api/vulns/DSA-1', { who: 'viewer' })).body.minions.map((m: { minion_id: string; package: string }) => `${m.minion_id}:${m.package}`)
      expect(after).toEqual(['deb-a:libssl3', 'deb-a:openssl', 'deb-b:libssl3', 'deb-b:openssl'])
      expect(await countOf(w, 'DSA-1')).toBe(2)
      // "Who runs openssl below …" offers the source package's binaries too, as the record does (issue 23 item 2).
      const below = (q: string) => call(w, 'GET', `/api/inventory/packages/openssl/minions?op=lt&version=3.0.13-1~deb12u1${q}`, { who: 'viewer' })
      const plain = (await below('')).body
      expect(plain.binaries).toEqual(['libssl3'])
      expect(plain.minions.map((m: { minion_id: string; package: string }) => `${m.minion_id}:${m.package}`)).toEqual(['deb-a:openssl', 'deb-b:openssl'])
      const withBinaries = (await below('&binaries=true')).body
      expect(withBinaries.total).toBe(4)
      expect(withBinaries.minions.map((m: { minion_id: string; package: string }) => `${m.minion_id}:${m.package}`)).toEqual(['deb-a:libssl3', 'deb-a:openssl', 'deb-b:libssl3', 'deb-b:openssl'])
      expect((await call(w, 'GET', '/api/inventory/packages/libssl3/minions', { who: 'viewer' })).body.binaries).toEqual([])
      // Learned once: a second pass asks nothing.
      expect((await learnSources(w.deps, client, () => `2026${Date.now()}`)).keys).toBe(0)
      // salt-api down: the learner gives up at the first failed call (leaving the keys for the next refresh) instead
      // of halving its batch hundreds of times against a dead service.
      await replacePackageSets(w.deps, [set('deb-a', { libssl3: '3.0.11-1~deb12u1', openssl: '3.0.11-1~deb12u1', zlib1g: '1:1.2.13', curl: '7.88.1' })])
      salt.stop()
      let asked = 0
      const counting = Object.assign(Object.create(client) as SaltClient, { local: (...a: Parameters<SaltClient['local']>) => (asked++, client.local(...a)) })
      await expect(learnSources(w.deps, counting, () => `2026${Date.now()}`)).rejects.toThrow()
      expect(asked).toBe(1)
      expect(await w.deps.db.row(sql`SELECT count(*) AS n FROM ${packageKeys} WHERE ${packageKeys.sourceTriedAt} IS NULL`)).toEqual({ n: 2 })
      const libssl = await vulns(w, '?package=libssl3')
      expect(libssl.vulns.map((v) => v.id)).toEqual(['DSA-1'])
    } finally {
      salt.stop()
    }
  })

  test('the vulnerable alert kind fires from findings at or above its severity and resolves when none is left', async () => {
    const w = await fleet()
    const rule = await call(w, 'POST', '/api/alerts/rules', { body: { name: 'vuln', kind: 'vulnerable', params: { min_severity: 'high' } } })
    expect(rule.status).toBe(201)
    expect(rule.body.params).toEqual({ min_severity: 'high' })
    await importJson(w, FEED)
    await watchTime(w.deps)
    const firing = await call(w, 'GET', '/api/alerts?state=firing')
    const subjects = firing.body.alerts.map((a: { subject: string }) => a.subject).sort()
    // deb-a (DSA-1 high, DSA-4 critical) and deb-c (DSA-1); deb-b has nothing at or above high.
    expect(subjects).toEqual(['deb-a', 'deb-c'])
    const a = firing.body.alerts.find((x: { subject: string }) => x.subject === 'deb-a')
    expect(a.details).toMatchObject({ worst: 'critical', count: 2, vulnerability_ids: ['DSA-4', 'DSA-1'] })
    await replacePackageSets(w.deps, [set('deb-c', { openssl: '3.0.13-1~deb12u1' })])
    w.clock.advance(10_000)
    await watchTime(w.deps)
    const now = await call(w, 'GET', '/api/alerts?state=firing')
    expect(now.body.alerts.map((x: { subject: string }) => x.subject)).toEqual(['deb-a'])
    expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'v2', kind: 'vulnerable', params: { min_severity: 'severe' } } })).status).toBe(422)
  })
})
