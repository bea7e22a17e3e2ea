// Proves replacePackageSets keeps the package aggregates equal to an independent model of the stored sets (contract §8) and the inventory reads filter, sort and page them.
import { describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { returnsOf } from '../helpers/fixtures'
import { replacePackageSets, sourceOf, type PackageSet } from '../../src/features/inventory/service'
import { PackageSetWriter } from '../../src/features/inventory/writer'
import { sql } from '../../src/db/sql'
import { packageKeys } from '../../src/db/schema'

type World = Awaited<ReturnType<typeof testWorld>>
type Row = { name: string; minion_count: number; version_count: number; last_seen: string }
const iso = (ms: number) => new Date(ms).toISOString()

/** A package set from `{name: version | [versions]}` (the shape of pkg.list_pkgs), all with one arch. */
const pkgSet = (minionId: string, source: string, pkgs: Record<string, string | string[]>, arch?: string): PackageSet => ({
  minionId, source, packages: Object.entries(pkgs).flatMap(([name, v]) => [v].flat().map((version) => ({ name, version, ...(arch ? { arch } : {}) }))),
})

const get = (w: World, path: string, who: 'viewer' | 'nobody' = 'viewer') => call(w, 'GET', path, { who })
const packages = async (w: World, q: Record<string, string> = {}) => {
  const r = await get(w, `/api/inventory/packages?${new URLSearchParams(q)}`)
  expect(r.status).toBe(200)
  return r.body as { total: number; items: Row[] }
}
/** name → [minion_count, version_count] of a list answer. */
const counts = (items: Row[]) => Object.fromEntries(items.map((r) => [r.name, [r.minion_count, r.version_count]]))

/**
 * What the fleet holds, kept by the test itself from every set it stored (the last set per minion wins, duplicate rows
 * count once), so the aggregates are checked against a computation that shares nothing with the storage.
 */
class Model {
  readonly minions = new Map<string, { source: string; at: number; rows: Map<string, { name: string; version: string; arch: string }> }>()
  /** Stores through replacePackageSets (a fresh writer), or through a long-lived writer as a refresh does. */
  async store(w: World, sets: PackageSet[], writer?: PackageSetWriter) {
    if (writer) {
      for (const s of sets) writer.addPackages(s.minionId, s.source, s.packages)
      await writer.flush()
    } else await replacePackageSets(w.deps, sets)
    for (const s of sets) {
      const rows = new Map(s.packages.map((p) => [`${p.name}\u0000${p.version}\u0000${p.arch ?? ''}`, { name: p.name, version: p.version, arch: p.arch ?? '' }]))
      this.minions.set(s.minionId, { source: s.source, at: w.clock.now(), rows })
    }
  }
  /** Per name: distinct minions, distinct version strings, latest collection time; sorted by name. */
  aggregate(source?: string) {
    const by = new Map<string, { minions: Set<string>; versions: Set<string>; last: number }>()
    for (const [id, m] of this.minions) {
      if (source && m.source !== source) continue
      for (const r of m.rows.values()) {
        const e = by.get(r.name) ?? { minions: new Set(), versions: new Set(), last: 0 }
        by.set(r.name, e)
        e.minions.add(id)
        e.versions.add(r.version)
        e.last = Math.max(e.last, m.at)
      }
    }
    return [...by].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, e]) => ({ name, minion_count: e.minions.size, version_count: e.versions.size, last_collected: e.last }))
  }
  /** Versions of one name: {version, arch, source, minion_count}. */
  versions(name: string) {
    const by = new Map<string, { version: string; arch: string; source: string; minion_count: number }>()
    for (const m of this.minions.values())
      for (const r of m.rows.values()) {
        if (r.name !== name) continue
        const k = `${m.source} ${r.version} ${r.arch}`
        const e = by.get(k) ?? { version: r.version, arch: r.arch, source: m.source, minion_count: 0 }
        by.set(k, e)
        e.minion_count++
      }
    return [...by.values()]
  }
  /** Distinct (name, version, arch) held anywhere. */
  keyCount() {
    return new Set([...this.minions.values()].flatMap((m) => [...m.rows.keys()])).size
  }
}
const byKey = <T extends { version: string; arch: string; source: string }>(xs: T[]) => [...xs].sort((a, b) => `${a.source} ${a.version} ${a.arch}`.localeCompare(`${b.source} ${b.version} ${b.arch}`))

// Three minions, two sources: web-01 and web-02 on apt, db-01 on rpm.
const WEB01 = { bash: '5.2.15', curl: '7.88', openssl: '3.0.11', vim: '9.0' }
const WEB02 = { bash: '5.2.15', curl: '7.88.1', openssl: '3.0.11', nginx: '1.22' }
const DB01 = { bash: '5.1.8', curl: '7.76', openssl: '3.0.7', postgresql: '15.4' }
/** The fleet above, collected one minute apart: db-01 at T, web-02 at T+1m, web-01 at T+2m. */
async function fleet() {
  const w = await testWorld()
  const t0 = w.clock.now()
  await replacePackageSets(w.deps, [pkgSet('db-01', 'rpm', DB01)])
  w.clock.advance(60_000)
  await replacePackageSets(w.deps, [pkgSet('web-02', 'apt', WEB02)])
  w.clock.advance(60_000)
  await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', WEB01)])
  return { w, t0 }
}

describe('sourceOf', () => {
  test.each([
    ['Debian', 'apt'], ['RedHat', 'rpm'], ['Suse', 'rpm'], ['Arch', 'pacman'], ['Gentoo', 'gentoo'], ['FreeBSD', 'freebsd'], ['Windows', 'windows'],
  ])('%s → %s', (family, source) => {
    expect(sourceOf(family)).toBe(source)
  })

  test('the recorded os_family grains are all Debian → apt', () => {
    const fam = returnsOf<string>('local-grains.get-os_family.json')
    expect(Object.values(fam).map(sourceOf)).toEqual(['apt', 'apt', 'apt'])
  })
})

describe('replacePackageSets keeps the counts', () => {
  test('after the first load', async () => {
    const { w } = await fleet()
    const all = await packages(w)
    expect(all.total).toBe(6)
    expect(counts(all.items)).toEqual({ bash: [3, 2], curl: [3, 3], nginx: [1, 1], openssl: [3, 2], postgresql: [1, 1], vim: [1, 1] })
    expect(counts((await packages(w, { source: 'apt' })).items)).toEqual({ bash: [2, 1], curl: [2, 2], nginx: [1, 1], openssl: [2, 1], vim: [1, 1] })
    expect(counts((await packages(w, { source: 'rpm' })).items)).toEqual({ bash: [1, 1], curl: [1, 1], openssl: [1, 1], postgresql: [1, 1] })
    expect(await packages(w, { source: 'pacman' })).toEqual({ total: 0, items: [] })
  })

  test('a filtered total follows every flush (totals are kept per inventory generation)', async () => {
    const { w } = await fleet()
    const named = async (q: string) => (await packages(w, { q })).total
    expect([await named('o'), await named('sql')]).toEqual([2, 1])
    const { vim: _gone, ...rest } = WEB01
    await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', { ...rest, 'mysql-common': '8.0', zoo: '1' })])
    expect([await named('o'), await named('sql')]).toEqual([4, 2])
    await replacePackageSets(w.deps, [pkgSet('db-01', 'rpm', { bash: '5.1.8' })])
    expect([await named('o'), await named('sql')]).toEqual([3, 1])
  })

  test('after one minion drops a package, upgrades one and adds one', async () => {
    const { w } = await fleet()
    const { vim: _gone, ...rest } = WEB01
    expect(await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', { ...rest, curl: '7.88.1', htop: '3.2.2' })])).toBe(4)
    expect(counts((await packages(w)).items)).toEqual({ bash: [3, 2], curl: [3, 2], htop: [1, 1], nginx: [1, 1], openssl: [3, 2], postgresql: [1, 1] })
    expect(counts((await packages(w, { source: 'apt' })).items)).toEqual({ bash: [2, 1], curl: [2, 1], htop: [1, 1], nginx: [1, 1], openssl: [2, 1] })
    expect((await get(w, '/api/inventory/packages/vim/versions')).status).toBe(404)
    expect((await get(w, '/api/inventory/packages/curl/versions')).body).toEqual({
      name: 'curl', total: 2,
      versions: [{ version: '7.88.1', arch: '', source: 'apt', minion_count: 2 }, { version: '7.76', arch: '', source: 'rpm', minion_count: 1 }],
    })
  })

  test('after a minion reports an empty set, names no minion has vanish', async () => {
    const { w } = await fleet()
    expect(await replacePackageSets(w.deps, [pkgSet('web-02', 'apt', {})])).toBe(0)
    const all = await packages(w)
    expect(counts(all.items)).toEqual({ bash: [2, 2], curl: [2, 2], openssl: [2, 2], postgresql: [1, 1], vim: [1, 1] })
    expect(all.total).toBe(5)
    expect((await get(w, '/api/inventory/packages/nginx/versions')).body).toEqual({ detail: 'Package not found' })
    expect((await get(w, '/api/minions/web-02/packages')).body).toMatchObject({ minion_id: 'web-02', total: 0, packages: [] })
    await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', {}), pkgSet('db-01', 'rpm', {})])
    expect(await packages(w)).toEqual({ total: 0, items: [] })
  })

  test('a replacement identical to what is stored changes no count and refreshes last_seen', async () => {
    const { w } = await fleet()
    const before = await packages(w)
    w.clock.advance(60_000)
    await replacePackageSets(w.deps, [pkgSet('db-01', 'rpm', DB01)])
    const after = await packages(w)
    expect(counts(after.items)).toEqual(counts(before.items))
    expect(after.items.find((r) => r.name === 'postgresql')!.last_seen).toBe(iso(w.clock.now()))
  })

  test('several versions and arches of one name on one minion count once as a minion, versions by string', async () => {
    const w = await testWorld()
    await replacePackageSets(w.deps, [
      { minionId: 'web-01', source: 'apt', packages: [
        { name: 'linux-image', version: '6.1.0-1', arch: 'amd64' }, { name: 'linux-image', version: '6.1.0-2', arch: 'amd64' },
        { name: 'libc6', version: '2.36', arch: 'amd64' }, { name: 'libc6', version: '2.36', arch: 'i386' },
        { name: 'libc6', version: '2.36', arch: 'i386' }, // a duplicate row in the collection is one row
      ] },
      { minionId: 'web-02', source: 'apt', packages: [{ name: 'libc6', version: '2.36', arch: 'amd64' }] },
    ])
    expect(counts((await packages(w)).items)).toEqual({ libc6: [2, 1], 'linux-image': [1, 2] })
    expect((await get(w, '/api/inventory/packages/libc6/versions')).body.versions).toEqual([
      { version: '2.36', arch: 'amd64', source: 'apt', minion_count: 2 }, { version: '2.36', arch: 'i386', source: 'apt', minion_count: 1 },
    ])
  })

  test('last_seen is the latest collection that reported the name', async () => {
    const { w, t0 } = await fleet()
    const seen = Object.fromEntries((await packages(w)).items.map((r) => [r.name, r.last_seen]))
    expect(seen).toEqual({
      bash: iso(t0 + 120_000), curl: iso(t0 + 120_000), openssl: iso(t0 + 120_000), vim: iso(t0 + 120_000), nginx: iso(t0 + 60_000), postgresql: iso(t0),
    })
    const rpm = Object.fromEntries((await packages(w, { source: 'rpm' })).items.map((r) => [r.name, r.last_seen]))
    expect(rpm).toEqual({ bash: iso(t0), curl: iso(t0), openssl: iso(t0), postgresql: iso(t0) })
  })

  test('last_seen falls back to the remaining rows when the minion seen last drops the name', async () => {
    // Contract §8: last_seen = latest collection time of any row of that name. Once web-01 no longer has vim,
    // the only vim row is web-02's, collected at t1.
    const w = await testWorld()
    const t1 = w.clock.now()
    await replacePackageSets(w.deps, [pkgSet('web-02', 'apt', { vim: '9.0' })])
    w.clock.advance(60_000)
    await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', { vim: '9.0' })])
    w.clock.advance(60_000)
    await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', { bash: '5.2.15' })])
    const vim = (await packages(w)).items.find((r) => r.name === 'vim')!
    expect(vim.minion_count).toBe(1)
    expect(vim.last_seen).toBe(iso(t1))
  })
})

describe('GET /api/inventory/packages', () => {
  test.each([
    ['(default: name asc)', {}, ['bash', 'curl', 'nginx', 'openssl', 'postgresql', 'vim']],
    ['name desc', { sort: 'name', order: 'desc' }, ['vim', 'postgresql', 'openssl', 'nginx', 'curl', 'bash']],
    ['minion_count (default desc)', { sort: 'minion_count' }, ['bash', 'curl', 'openssl', 'nginx', 'postgresql', 'vim']],
    ['minion_count asc', { sort: 'minion_count', order: 'asc' }, ['nginx', 'postgresql', 'vim', 'bash', 'curl', 'openssl']],
    ['version_count (default desc)', { sort: 'version_count' }, ['curl', 'bash', 'openssl', 'nginx', 'postgresql', 'vim']],
    ['version_count asc', { sort: 'version_count', order: 'asc' }, ['nginx', 'postgresql', 'vim', 'bash', 'openssl', 'curl']],
    ['last_seen (default desc)', { sort: 'last_seen' }, ['bash', 'curl', 'openssl', 'vim', 'nginx', 'postgresql']],
    ['last_seen asc', { sort: 'last_seen', order: 'asc' }, ['postgresql', 'nginx', 'bash', 'curl', 'openssl', 'vim']],
  ])('sort %s; ties by name ascending', async (_label, q, names) => {
    const { w } = await fleet()
    expect((await packages(w, q)).items.map((r) => r.name)).toEqual(names)
  })

  test('paging walks the sorted list; total counts every matching name', async () => {
    const { w } = await fleet()
    for (const sort of ['name', 'minion_count', 'version_count', 'last_seen']) {
      const full = await packages(w, { sort })
      const walked: string[] = []
      for (let offset = 0; offset < 7; offset += 4) {
        const page = await packages(w, { sort, limit: '4', offset: String(offset) })
        expect(page.total).toBe(6)
        walked.push(...page.items.map((r) => r.name))
      }
      expect(walked).toEqual(full.items.map((r) => r.name))
    }
    expect(await packages(w, { offset: '6' })).toEqual({ total: 6, items: [] })
    expect(await packages(w, { source: 'apt', sort: 'minion_count', limit: '1' })).toMatchObject({ total: 5, items: [{ name: 'bash' }] })
  })

  test('limit defaults to 100', async () => {
    const w = await testWorld()
    await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`p${String(i).padStart(3, '0')}`, '1'])))])
    const r = await packages(w)
    expect(r.total).toBe(130)
    expect(r.items.length).toBe(100)
    expect((await packages(w, { limit: '500' })).items.length).toBe(130)
  })

  describe('q', () => {
    const NAMES = ['lib_foo', 'libxfoo', 'LibCaps', '100%-pkg', '100x-pkg', 'bash', 'back\\slash']
    async function named() {
      const w = await testWorld()
      await replacePackageSets(w.deps, [pkgSet('web-01', 'apt', Object.fromEntries(NAMES.map((n) => [n, '1'])))])
      return w
    }
    test.each([
      ['lib', ['LibCaps', 'lib_foo', 'libxfoo']],
      ['LIB', ['LibCaps', 'lib_foo', 'libxfoo']],
      ['_', ['lib_foo']],
      ['lib_', ['lib_foo']],
      ['%', ['100%-pkg']],
      ['100%', ['100%-pkg']],
      ['b_sh', []],
      ['\\', ['back\\slash']],
      ['BAS', ['bash']],
      ['nothing', []],
    ])('q=%p', async (q, want) => {
      const w = await named()
      const r = await packages(w, { q })
      expect(r.items.map((x) => x.name).sort()).toEqual([...want].sort())
      expect(r.total).toBe(want.length)
    })
  })

  test.each([
    [{ sort: 'size' }, 'sort', 'literal_error'],
    [{ order: 'up' }, 'order', 'literal_error'],
    [{ limit: '0' }, 'limit', 'greater_than_equal'],
    [{ limit: '501' }, 'limit', 'less_than_equal'],
    [{ offset: '-1' }, 'offset', 'greater_than_equal'],
    [{ q: 'x'.repeat(201) }, 'q', 'string_too_long'],
  ].map(([q, f, t]) => [new URLSearchParams(q as Record<string, string>).toString().slice(0, 30), q, f, t] as const))('%s is a 422', async (_label, q, field, type) => {
    const w = await testWorld()
    const r = await get(w, `/api/inventory/packages?${new URLSearchParams(q as Record<string, string>)}`)
    expect(r.status).toBe(422)
    expect(r.body.detail).toEqual([expect.objectContaining({ loc: ['query', field], type })])
  })

  test('needs view inventory:*', async () => {
    const { w } = await fleet()
    expect((await get(w, '/api/inventory/packages', 'nobody')).status).toBe(403)
    expect((await call(w, 'GET', '/api/inventory/packages', { who: 'anon' })).status).toBe(401)
  })
})

describe('GET /api/inventory/packages/{name}/versions', () => {
  test('most common first, per source, with the source filter', async () => {
    const { w } = await fleet()
    const all = (await get(w, '/api/inventory/packages/bash/versions')).body
    expect(all).toEqual({
      name: 'bash', total: 2,
      versions: [{ version: '5.2.15', arch: '', source: 'apt', minion_count: 2 }, { version: '5.1.8', arch: '', source: 'rpm', minion_count: 1 }],
    })
    expect((await get(w, '/api/inventory/packages/bash/versions?source=rpm')).body).toEqual({
      name: 'bash', total: 1, versions: [{ version: '5.1.8', arch: '', source: 'rpm', minion_count: 1 }],
    })
    expect((await get(w, '/api/inventory/packages/nginx/versions?source=rpm')).status).toBe(404)
    expect((await get(w, '/api/inventory/packages/nope/versions')).body).toEqual({ detail: 'Package not found' })
  })
})

describe('answers kept until the next commit (db/until-commit.ts) follow each inventory change', () => {
  test('the version query, the package list total and the versions of a name, asked again after each flush', async () => {
    const { w } = await fleet()
    const holders = async (q: string) => ((await get(w, `/api/inventory/packages/curl/minions?${q}`)).body.minions as { minion_id: string; version: string }[]).map((m) => `${m.minion_id} ${m.version}`)
    const total = async () => (await packages(w)).total
    expect(await holders('op=eq&version=7.88')).toEqual(['web-01 7.88'])
    expect(await holders('op=eq&version=7.88')).toEqual(['web-01 7.88'])
    expect(await total()).toBe(6)
    // web-02 moves to curl 7.88; web-01 adds zoo.
    await replacePackageSets(w.deps, [pkgSet('web-02', 'apt', { ...WEB02, curl: '7.88' }), pkgSet('web-01', 'apt', { ...WEB01, zoo: '1' })])
    expect(await holders('op=eq&version=7.88')).toEqual(['web-01 7.88', 'web-02 7.88'])
    expect(await total()).toBe(7)
    expect((await get(w, '/api/inventory/packages/zoo/versions')).body.total).toBe(1)
    // A name no minion held before: its keys are found once some minion holds it.
    await replacePackageSets(w.deps, [pkgSet('db-01', 'rpm', { ...DB01, curl: '7.88' })])
    expect(await holders('op=eq&version=7.88')).toEqual(['db-01 7.88', 'web-01 7.88', 'web-02 7.88'])
  })
})

describe('GET /api/minions/{id}/packages', () => {
  test("lists that minion's rows by name with q and paging", async () => {
    const { w, t0 } = await fleet()
    const r = await get(w, '/api/minions/db-01/packages')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      minion_id: 'db-01', collected_at: iso(t0), salt_source: 'default', total: 4,
      packages: Object.entries(DB01).map(([name, version]) => ({ name, version, arch: '', source: 'rpm' })),
    })
    expect((await get(w, '/api/minions/db-01/packages?q=SQL')).body).toMatchObject({ total: 1, packages: [{ name: 'postgresql' }] })
    const page = await get(w, '/api/minions/db-01/packages?limit=2&offset=1')
    expect(page.body.total).toBe(4)
    expect(page.body.packages.map((p: any) => p.name)).toEqual(['curl', 'openssl'])
  })
})

describe('the real pkg.list_pkgs captures (versions_as_list)', () => {
  const one = returnsOf('local-pkg.list_pkgs.json')['web-01'] as Record<string, string[]>
  const allMinions = returnsOf('local-pkg.list_pkgs-all.json') as Record<string, Record<string, string[]>>
  const family = returnsOf('local-grains.get-os_family.json') as Record<string, string>

  test('every value is a list of versions', () => {
    expect(Object.values(one).every((v) => Array.isArray(v) && v.length >= 1)).toBe(true)
    expect(Object.keys(one).length).toBe(751)
  })

  test('one minion: one row per name, counts from the lists', async () => {
    const w = await testWorld()
    const stored = await replacePackageSets(w.deps, [pkgSet('web-01', sourceOf(family['web-01']), one)])
    expect(stored).toBe(Object.values(one).reduce((a, v) => a + new Set(v).size, 0))
    const r = await packages(w, { limit: '500' })
    expect(r.total).toBe(751)
    const all = [...r.items, ...(await packages(w, { limit: '500', offset: '500' })).items]
    expect(all.length).toBe(751)
    for (const row of all) expect([row.minion_count, row.version_count]).toEqual([1, new Set(one[row.name]).size])
    expect((await get(w, '/api/inventory/packages/libstdc%2B%2B6/versions')).body).toEqual({
      name: 'libstdc++6', total: 1, versions: [{ version: one['libstdc++6']![0], arch: '', source: 'apt', minion_count: 1 }],
    })
    const lib = Object.keys(one).filter((n) => n.toLowerCase().includes('lib')).length
    expect((await packages(w, { q: 'LIB' })).total).toBe(lib)
    expect((await get(w, '/api/minions/web-01/packages?limit=1')).body.total).toBe(751)
  })

  test('three minions at once, then an upgrade on one of them', async () => {
    const w = await testWorld()
    await replacePackageSets(w.deps, Object.entries(allMinions).map(([m, p]) => pkgSet(m, sourceOf(family[m]), p)))
    const names = new Set(Object.values(allMinions).flatMap((p) => Object.keys(p)))
    const expectedCounts = (name: string) => [
      Object.values(allMinions).filter((p) => name in p).length,
      new Set(Object.values(allMinions).flatMap((p) => p[name] ?? [])).size,
    ]
    const r = await packages(w, { limit: '500', sort: 'minion_count', order: 'asc' })
    expect(r.total).toBe(names.size)
    for (const row of r.items) expect([row.minion_count, row.version_count]).toEqual(expectedCounts(row.name))
    expect(r.items[0]).toMatchObject({ name: 'adduser', minion_count: 3, version_count: 1 })
    // db-01 upgrades bash.
    const db = { ...allMinions['db-01']!, bash: ['5.2.15-2+b9'] }
    await replacePackageSets(w.deps, [pkgSet('db-01', 'apt', db)])
    expect((await get(w, '/api/inventory/packages/bash/versions')).body.versions).toEqual([
      { version: '5.2.15-2+b8', arch: '', source: 'apt', minion_count: 2 }, { version: '5.2.15-2+b9', arch: '', source: 'apt', minion_count: 1 },
    ])
    expect((await packages(w, { q: 'bash' })).items.find((x) => x.name === 'bash')).toMatchObject({ minion_count: 3, version_count: 2 })
  })

  test('attr=version,arch answers (plain strings) load the same way', async () => {
    const w = await testWorld()
    const attr = returnsOf('local-pkg.list_pkgs-attr.json')['web-02'] as Record<string, string>
    await replacePackageSets(w.deps, [pkgSet('web-02', 'apt', attr)])
    expect((await packages(w, { limit: '1' })).total).toBe(Object.keys(attr).length)
    expect((await get(w, '/api/inventory/packages/bash/versions')).body.versions[0].version).toBe(attr.bash)
  })
})

describe('aggregates equal an independent recount after random replacements', () => {
  /** mulberry32: a small seeded PRNG so every run replays the same sequence. */
  function prng(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    }
  }
  const SOURCES = ['apt', 'rpm', 'pacman']
  const NAMES = Array.from({ length: 24 }, (_, i) => `pkg-${String.fromCharCode(97 + i)}`)
  const VERSIONS = ['1.0', '1.1', '2.0', '2.0-1']
  const ARCHES = ['', 'amd64', 'i386']

  async function compare(w: World, model: Model) {
    for (const source of [undefined, ...SOURCES]) {
      const want = model.aggregate(source)
      const got = await packages(w, { limit: '500', ...(source ? { source } : {}) })
      expect(got.total).toBe(want.length)
      expect(got.items.map((r) => [r.name, r.minion_count, r.version_count])).toEqual(want.map((r) => [r.name, r.minion_count, r.version_count]))
      // last_seen: the latest collection time of any row of that name (contract §8).
      expect(got.items.map((r) => [r.name, r.last_seen])).toEqual(want.map((r) => [r.name, iso(r.last_collected)]))
      // Every set here came through the salt source default: its list, counted on request from the sets, is the same,
      // in every sort.
      for (const sort of ['name', 'minion_count', 'version_count', 'last_seen'])
        expect(await packages(w, { limit: '500', sort, salt_source: 'default', ...(source ? { source } : {}) })).toEqual(await packages(w, { limit: '500', sort, ...(source ? { source } : {}) }))
      expect(await packages(w, { q: 'G-B', limit: '3', offset: '1', salt_source: 'default', ...(source ? { source } : {}) }))
        .toEqual(await packages(w, { q: 'G-B', limit: '3', offset: '1', ...(source ? { source } : {}) }))
      expect(await packages(w, { salt_source: 'east', ...(source ? { source } : {}) })).toEqual({ total: 0, items: [] })
    }
    // The stored sets themselves, read back through the minion endpoint, are what each minion last reported.
    for (const [id, m] of model.minions) {
      const r = await get(w, `/api/minions/${id}/packages?limit=500`)
      const want = [...m.rows.values()].map((p) => ({ ...p, source: m.source })).sort((a, b) => `${a.name} ${a.version} ${a.arch}`.localeCompare(`${b.name} ${b.version} ${b.arch}`))
      expect(r.body).toEqual({ minion_id: id, collected_at: iso(m.at), salt_source: 'default', total: want.length, packages: want })
    }
    // A key no minion holds any more leaves package_keys.
    expect((await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${packageKeys}`))!.n).toBe(model.keyCount())
  }

  test.each([1, 7, 2026])('seed %i', async (seed) => {
    const rnd = prng(seed)
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!
    const w = await testWorld()
    const model = new Model()
    const writer = await PackageSetWriter.open(w.deps)
    const minions = Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, source: SOURCES[i % 3]! }))
    let changes = 0
    for (let step = 0; step < 50; step++) {
      if (rnd() < 0.8) w.clock.advance(1000) // else a second collection in the same millisecond
      const batch: PackageSet[] = []
      for (let n = 1 + Math.floor(rnd() * 3); n > 0; n--) {
        const m = pick(minions)
        if (rnd() < 0.1) m.source = pick(SOURCES) // reinstalled with another OS family
        const packages = rnd() < 0.15 ? [] : NAMES.filter(() => rnd() < 0.4).flatMap((name) =>
          Array.from({ length: rnd() < 0.2 ? 2 : 1 }, () => ({ name, version: pick(VERSIONS), arch: pick(ARCHES) })))
        batch.push({ minionId: m.id, source: m.source, packages })
      }
      changes += batch.length
      // Mixing a long-lived writer with fresh ones makes it reload key ids that another writer added or dropped.
      await model.store(w, batch, step % 3 ? writer : undefined)
      await compare(w, model)
    }
    expect(changes).toBeGreaterThan(50)
    // Every name's versions, as the fleet holds them.
    for (const name of NAMES) {
      const want = model.versions(name)
      const r = await get(w, `/api/inventory/packages/${name}/versions`)
      if (!want.length) {
        expect(r.status).toBe(404)
        continue
      }
      expect(r.body.total).toBe(want.length)
      expect(byKey(r.body.versions)).toEqual(byKey(want))
      const mc = r.body.versions.map((v: any) => v.minion_count)
      expect(mc).toEqual([...mc].sort((a: number, b: number) => b - a))
    }
    // 50 flushes each compared with a whole recount: on PostgreSQL, a few hundred round trips (4-12 s on a loaded
    // machine, past bun's 5 s default).
  }, 60_000)
})

test("a writer numbers the stored names in name order, whatever order a salt answer listed them in", async () => {
  // The flush writes one row per name in the catalog's order; in name order those writes walk the B-trees in order
  // (writer.ts open). Stored here in reverse order, the way a salt answer may list them.
  const w = await testWorld()
  const names = ['zsh', 'vim', 'openssl', 'libc6', 'curl', 'bash']
  await replacePackageSets(w.deps, [{ minionId: 'm1', source: 'apt', packages: names.map((name) => ({ name, version: '1', arch: 'amd64' })) }])
  const writer = await PackageSetWriter.open(w.deps)
  expect(writer.catalog.nameOf.slice(0, names.length)).toEqual([...names].sort())
})
