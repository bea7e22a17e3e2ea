// Proves migrations 0006/0007 carry minion_packages rows over into package sets: every minion reads back the same rows,
// collection times survive (also for an empty set), and the writer keeps the carried-over aggregates exact afterwards.
import { expect, test } from 'bun:test'
import { openDb, type Db } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { migrateBefore } from '../helpers/migrations'
import { ManualClock } from '../../src/lib/clock'
import { Logger } from '../../src/lib/log'
import { loadConfig } from '../../src/config'
import type { AppDeps } from '../../src/deps'
import { minionPackages, replacePackageSets, listPackages, packageVersions } from '../../src/features/inventory/service'

const T0 = Date.parse('2026-11-01T00:00:00Z')
// minion → [source, collected_at, rows]
const FLEET: Record<string, [string, number, [string, string, string][]]> = {
  'web-01': ['apt', T0, [['bash', '5.2', ''], ['libc6', '2.36', 'amd64'], ['libc6', '2.36', 'i386'], ['curl', '7.88', '']]],
  'web-02': ['apt', T0 + 1000, [['bash', '5.2', ''], ['curl', '7.88.1', ''], ['zsh', "5.9'\"%_", '']]],
  'db-01': ['rpm', T0 + 2000, [['bash', '5.1', ''], ['postgresql', '15.4', 'x86_64']]],
}

/** A database at migration 0005 holding FLEET as minion_packages rows, with aggregates recounted by GROUP BY. */
function oldDb() {
  const db = openDb(':memory:')
  migrateBefore(db, '0006_inventory_package_sets')
  const c = db.$client
  for (const [id, [source, at, rows]] of Object.entries(FLEET)) {
    c.query('INSERT INTO minions (id, inventory_collected_at, updated_at) VALUES (?1, ?2, ?2)').run(id, at)
    for (const [name, version, arch] of rows) c.query('INSERT INTO minion_packages (minion_id, name, version, arch, source) VALUES (?1, ?2, ?3, ?4, ?5)').run(id, name, version, arch, source)
  }
  c.query("INSERT INTO minions (id, inventory_collected_at, updated_at) VALUES ('empty-01', ?1, ?1)").run(T0 + 3000)
  c.exec(`INSERT INTO package_versions SELECT source, name, version, arch, count(*) FROM minion_packages GROUP BY 1, 2, 3, 4;
    INSERT INTO package_versions SELECT '', name, version, arch, count(*) FROM minion_packages GROUP BY 2, 3, 4;
    INSERT INTO package_seen SELECT p.source, p.name, m.inventory_collected_at, count(DISTINCT p.minion_id) FROM minion_packages p JOIN minions m ON m.id = p.minion_id GROUP BY 1, 2, 3;
    INSERT INTO package_stats SELECT p.source, p.name, count(DISTINCT p.minion_id), count(DISTINCT p.version), max(m.inventory_collected_at) FROM minion_packages p JOIN minions m ON m.id = p.minion_id GROUP BY 1, 2;
    INSERT INTO package_stats SELECT '', p.name, count(DISTINCT p.minion_id), count(DISTINCT p.version), max(m.inventory_collected_at) FROM minion_packages p JOIN minions m ON m.id = p.minion_id GROUP BY 2;`)
  return db
}

const depsOf = (db: Db, clock = new ManualClock(T0 + 60_000)): AppDeps => ({ db, clock, config: loadConfig({}), log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32) })
const page = { limit: 500, offset: 0 }

test('every minion reads back its rows and collection time after the migration', async () => {
  const db = oldDb()
  await migrate(db)
  const deps = depsOf(db)
  for (const [id, [source, at, rows]] of Object.entries(FLEET)) {
    const want = rows.map(([name, version, arch]) => ({ name, version, arch, source })).sort((a, b) => `${a.name} ${a.version} ${a.arch}`.localeCompare(`${b.name} ${b.version} ${b.arch}`))
    expect(await minionPackages(deps, id, page)).toEqual({ minion_id: id, collected_at: new Date(at).toISOString(), salt_source: 'default', total: rows.length, packages: want })
  }
  expect(await minionPackages(deps, 'empty-01', page)).toEqual({ minion_id: 'empty-01', collected_at: new Date(T0 + 3000).toISOString(), salt_source: 'default', total: 0, packages: [] })
  expect(await minionPackages(deps, 'web-02', { ...page, q: "'\"%" })).toMatchObject({ total: 0 })
  expect((await minionPackages(deps, 'web-02', { ...page, q: 'zs' })).packages).toEqual([{ name: 'zsh', version: "5.9'\"%_", arch: '', source: 'apt' }])
  const tables = db.$client.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name)
  expect(tables).not.toContain('minion_packages')
  expect(db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM package_keys').get()!.n).toBe(8)
})

test('the writer diffs against carried-over sets: a replay changes nothing, an upgrade moves the counts', async () => {
  const db = oldDb()
  await migrate(db)
  const deps = depsOf(db)
  const before = await listPackages(deps, page)
  const setOf = (id: string, rows = FLEET[id]![2]) => ({ minionId: id, source: FLEET[id]![0], packages: rows.map(([name, version, arch]) => ({ name, version, arch })) })
  // Same sets at the same collection times: no aggregate moves.
  for (const id of Object.keys(FLEET)) await replacePackageSets(deps, [setOf(id)], FLEET[id]![1])
  expect(await listPackages(deps, page)).toEqual(before)
  // web-01 upgrades curl to web-02's version and drops libc6:i386.
  await replacePackageSets(deps, [setOf('web-01', [['bash', '5.2', ''], ['libc6', '2.36', 'amd64'], ['curl', '7.88.1', '']])])
  expect(await packageVersions(deps, 'curl')).toEqual({ name: 'curl', total: 1, versions: [{ version: '7.88.1', arch: '', source: 'apt', minion_count: 2 }] })
  expect((await packageVersions(deps, 'libc6'))!.versions).toEqual([{ version: '2.36', arch: 'amd64', source: 'apt', minion_count: 1 }])
  const after = Object.fromEntries((await listPackages(deps, page)).items.map((r) => [r.name, [r.minion_count, r.version_count, r.last_seen]]))
  expect(after.curl).toEqual([2, 1, new Date(T0 + 60_000).toISOString()])
  expect(after.bash).toEqual([3, 2, new Date(T0 + 60_000).toISOString()])
  expect(after.zsh).toEqual([1, 1, new Date(T0 + 1000).toISOString()])
  // The dropped keys left package_keys (curl 7.88 and libc6 i386).
  expect(db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM package_keys').get()!.n).toBe(6)
})
