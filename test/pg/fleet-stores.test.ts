/**
 * The fleet features' stores (minions, runs, activity) on both engines: the same facts stored through the same
 * functions on SQLite and on PostgreSQL give the same answers, so each SQL twin (grain search, globs, LIKE/ILIKE, the
 * search, greatest, jsonb lists, NULL order) is checked against its SQLite original. Skipped until the PostgreSQL
 * migrations (drizzle-pg/) are in the tree, or without PostgreSQL installed.
 */
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { sql } from 'drizzle-orm'
import { openDb, openPostgres, type Db } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { loadConfig } from '../../src/config'
import { Logger } from '../../src/lib/log'
import { ManualClock } from '../../src/lib/clock'
import type { AppDeps } from '../../src/deps'
import { attachSearchIndex } from '../../src/db/search-index'
import { recordKeyChanges, recordKeyFingerprints, recordKeyList, recordPresence, recordPresentList, recordStart } from '../../src/features/minions/ingest'
import { acceptedAmong, acceptedMinionIds, keysWithoutFingerprint, listKeys, listMinions, minionDetail, minionVersions, presentMinionIds, recordGrains } from '../../src/features/minions/service'
import { listRuns, recordRun, runDiff, runWithDetail } from '../../src/features/runs/service'
import { failingStates, pruneTrend, runSummary, runTrend } from '../../src/features/runs/health'
import { eventsAfter, lastEventId, listEvents, streamCursor, pruneEvents, recordEvents, type EventInput } from '../../src/features/activity/service'
import { pgBinDir, sharedCluster } from '../helpers/pg-cluster'

const PG_MIGRATIONS = 'drizzle-pg'
const ready = existsSync(PG_MIGRATIONS) && (() => {
  try {
    return !!pgBinDir()
  } catch {
    return false
  }
})()

const T0 = Date.UTC(2026, 10, 20, 12)
const ALL = [{ verb: '*', resource_glob: '*' }]

/** A new PostgreSQL database of the test cluster with drizzle-pg/'s migrations applied. */
async function postgresDb(): Promise<Db> {
  const name = `saltdeck_fleet_${process.pid}`
  const admin = openPostgres(sharedCluster().url())
  await admin.exec(sql.raw(`CREATE DATABASE ${name}`))
  await admin.close()
  const db = openPostgres(sharedCluster().url(name))
  for (const f of readdirSync(PG_MIGRATIONS).filter((f) => f.endsWith('.sql')).sort())
    for (const st of readFileSync(`${PG_MIGRATIONS}/${f}`, 'utf8').split('--> statement-breakpoint')) if (st.trim()) await db.exec(sql.raw(st))
  return db
}

/** Stores the same facts through the features and reads every answer back. */
async function scenario(db: Db): Promise<Record<string, unknown>> {
  const clock = new ManualClock(T0)
  const deps = { db, clock, config: loadConfig({}), log: new Logger('json', () => {}, true) } as unknown as AppDeps
  const out: Record<string, unknown> = {}
  const ev: EventInput[] = []
  await db.tx(async (tx) => {
    const keys = [{ minionId: 'web-01', act: 'accept' }, { minionId: 'web-02', act: 'accept' }, { minionId: 'db-01', act: 'pend' }, { minionId: 'Web-03', act: 'accept' }] as const
    await recordKeyList(deps, tx, { keys: [...keys], ts: T0 }, ev)
    await recordKeyChanges(deps, tx, [{ minionId: 'db-01', act: 'accept', ts: T0 + 1 }, { minionId: 'gone', act: 'delete', ts: T0 + 1 }, { minionId: 'x[1]', act: 'reject', ts: T0 + 2 }], 'alice', ev)
    await recordKeyFingerprints(deps, tx, [{ minionId: 'web-01', act: 'accept', fingerprint: 'aa:bb' }, { minionId: 'db-01', act: 'pend', fingerprint: 'no' }])
    await recordPresentList(deps, tx, { ids: ['web-01', 'web-02', 'db-01', 'web-01'], ts: T0 + 10 }, ev)
    await recordPresence(deps, tx, 'web-02', false, T0 + 20, ev)
    await recordPresence(deps, tx, 'web-01', true, T0 + 5, ev)
    await recordStart(deps, tx, 'web-01', T0 + 30, ev)
    await recordStart(deps, tx, 'web-01', T0 + 31, ev)
    await recordStart(deps, tx, 'nobody', T0 + 31, ev)
  })
  out.keyEvents = ev.map((e) => [e.event_type, e.minion_id, e.initiator ?? null])
  out.storedIds = (await recordEvents(deps, ev)).map((e) => e.id)
  await recordGrains(deps, [
    { id: 'web-01', grains: { os: 'Debian', osrelease: '12', saltversion: '3007.1', ipv4: ['127.0.0.1', '10.0.0.1'], roles: ['Web', 'edge'], virtual: true, nothing: null, num: 5, nested: { a: 1 } } },
    { id: 'web-02', grains: { os: 'Ubuntu', osrelease: '22.04', saltversion: '3006.9', roles: ['db'], virtual: false } },
    { id: 'db-01', grains: { os: 'Debian', saltversion: '3007.1', os_family: 'Debian', roles: 'database' } },
  ])
  for (const q of ['web', 'WEB', 'web-0?', 'Web-*', 'x[[]1]', '[!w]*', 'os:debian', 'G@os:DEB*', 'roles:web', 'roles:d*', 'G@roles', 'virtual:true', 'virtual:false', 'nothing:none', 'num:5', 'nested:*', 'os:[z-a]', '%', '_'])
    out[`minions ${q}`] = (await listMinions(deps, { q, limit: 50, offset: 0 })).minions.map((m) => m.id)
  for (const status of ['online', 'offline', 'accepted', 'rejected'] as const)
    out[`status ${status}`] = (await listMinions(deps, { status, limit: 50, offset: 0 })).minions.map((m) => [m.id, m.online, m.last_seen])
  out.detail = await minionDetail(deps, 'web-01')
  out.keys = await listKeys(deps)
  out.versions = await minionVersions(deps)
  out.accepted = await acceptedMinionIds(deps)
  out.present = await presentMinionIds(deps)
  out.among = [...(await acceptedAmong(deps, ['web-01', 'x[1]', 'nope', 'db-01']))]
  out.withoutFingerprint = await keysWithoutFingerprint(deps)

  const st = (id: string, result: boolean | null, changes: object = {}, comment = 'ok') => ({
    [`pkg_|-${id}_|-${id}_|-installed`]: { result, changes, comment, __sls__: id.startsWith('n') ? 'nginx' : 'base', __run_num__: 0, __id__: id, name: id, duration: 2.5 },
  })
  const runs = [
    await recordRun(deps, { minionId: 'web-01', jid: '20261120110000000001', fun: 'state.apply', ret: { ...st('nginx', false, {}, 'broke'), ...st('base', true) }, stampMs: T0 - 3600_000 }),
    await recordRun(deps, { minionId: 'web-01', jid: '20261120120000000002', fun: 'state.apply', ret: { ...st('nginx', true, { x: 1 }), ...st('base', true) }, stampMs: T0 + 86_400_000 }),
    await recordRun(deps, { minionId: 'web-02', jid: '20261120120000000003', fun: 'state.apply', ret: st('nginx', false, {}, 'broke'), stampMs: T0, args: ['test=True'] }),
    await recordRun(deps, { minionId: 'web-02', jid: '20261120120000000004', fun: 'state.apply', ret: st('nginx', false, {}, 'broke'), stampMs: T0 }),
    await recordRun(deps, { minionId: 'web-02', jid: '20261120120000000004', fun: 'state.apply', ret: {}, stampMs: T0 }),
    await recordRun(deps, { minionId: 'db-01', jid: '20261120120000000005', fun: 'state.apply', ret: ['Rendering SLS failed'], stampMs: T0 }),
  ]
  out.runsStored = runs.map((r) => r && [r.status, r.test, r.failedStates])
  clock.advance(2 * 86_400_000)
  const noId = <T extends { id?: unknown }>(r: T) => ({ ...r, id: undefined })
  out.runs = (await listRuns(deps, 'web-01', { limit: 10, offset: 0 })).runs.map(noId)
  out.runsFiltered = (await listRuns(deps, 'web-02', { limit: 10, offset: 0, test: false, status: 'unhealthy' })).runs.map(noId)
  out.runDetail = noId(await runWithDetail(deps, 'web-01', '20261120120000000002'))
  out.runErrors = noId(await runWithDetail(deps, 'db-01', '20261120120000000005'))
  const diff = await runDiff(deps, 'web-01', '20261120120000000002', 'previous')
  out.diff = { ...diff, from: noId(diff.from), to: noId(diff.to) }
  out.summary = await runSummary(deps)
  out.trend = await runTrend(deps, 5)
  out.failing = await failingStates(deps, { limit: 10 })
  out.prunedTrend = await pruneTrend(deps)

  const feed: EventInput[] = Array.from({ length: 60 }, (_, i) => ({
    ts: clock.now() - 3600_000 + i * 1000, category: ['job', 'key', 'minion'][i % 3]!, event_type: ['job.ret', 'key.pend', 'minion.start'][i % 3]!, minion_id: `Web-${i}`,
    jid: `j${i % 7}`, fun: i % 2 ? 'test.ping' : 'state.apply', success: i % 4 === 0 ? null : i % 4 === 1, changed: i % 5 === 0, initiator: i % 6 ? null : 'Bob',
    target: 'web-*', duration_ms: i * 1.6, summary: `Web-${i} did ${i % 2 ? 'PING' : 'apply'} 100%_done`,
  }))
  await recordEvents(deps, feed)
  const filters = [{}, { category: 'key' }, { categories: 'key,minion' }, { event_type: 'job.ret' }, { minion: 'eb-1' }, { minion_id: 'Web-3' }, { jid: 'j3' },
    { search: 'ping' }, { search: 'bob' }, { search: '%_d' }, { search: 'eb-1' }, { search: 'a\0b' }, { hide_dispatch: true }, { hide_routine: true },
    { success: false }, { since_minutes: 30 }, { search: 'apply', since_minutes: 40, category: 'job' }]
  for (const f of filters) {
    const a = await listEvents(deps, { hide_dispatch: false, hide_routine: false, ...f }, ALL, 5, 0)
    const b = await listEvents(deps, { hide_dispatch: false, hide_routine: false, ...f }, ALL, 5, 5)
    out[`events ${JSON.stringify(f)}`] = [a.total, a.events, b.events.map((e) => e.id)]
  }
  const after = await eventsAfter(deps, { category: 'minion', hide_dispatch: false, hide_routine: false }, ALL, await streamCursor(deps, 10), 5)
  out.after = [after.events, after.next.id, after.more, after.held]
  out.last = await lastEventId(deps)
  out.pruned = await pruneEvents(deps, 1)
  out.afterPrune = (await listEvents(deps, { hide_dispatch: false, hide_routine: false }, ALL, 3, 0)).total
  return out
}

test.skipIf(!ready)('the minions, runs and activity stores answer alike on SQLite and PostgreSQL', async () => {
  const lite = openDb(':memory:')
  migrate(lite)
  attachSearchIndex(lite.$client)
  const expected = await scenario(lite)
  const pg = await postgresDb()
  try {
    expect(await scenario(pg)).toEqual(expected)
  } finally {
    await pg.close()
  }
}, 60_000)
