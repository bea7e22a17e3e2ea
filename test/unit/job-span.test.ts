// A job Saltdeck publishes through several masters under one jid (contract §15) is reported by each master with only its
// part: upsertJobs keeps the union of the minions (and of a list target), and a repeated report of one master changes nothing.
import { expect, test } from 'bun:test'
import { testDb } from '../helpers/migrations'
import { upsertJobs, type JobInput } from '../../src/features/jobs/service'
import { sql } from '../../src/db/sql'

const job = (minions: string[] | null, target: string | null, tgtType = 'list'): JobInput =>
  ({ jid: '20261127020000000001', fun: 'test.ping', target, tgtType, user: 'saltsecret', arg: [], minions, startedAt: Date.UTC(2026, 10, 27, 2) })
const stored = async (db: Awaited<ReturnType<typeof testDb>>) =>
  db.row<{ minions: string; target: string; source: string }>(sql`SELECT minions, target, source FROM jobs WHERE jid = '20261127020000000001'`)

test('a second master\'s part widens the job to the union of minions and of the list target; the first source stays', async () => {
  const db = await testDb()
  expect(await upsertJobs(db, [job(['m1-01', 'both-01'], 'both-01,m1-01')], 'default')).toEqual(['20261127020000000001'])
  expect(await upsertJobs(db, [job(['m2-01'], 'm2-01')], 'east')).toEqual([])
  expect(await stored(db)).toEqual({ minions: '["both-01","m1-01","m2-01"]', target: 'both-01,m1-01,m2-01', source: 'default' })
  // The same part again, from either master: nothing moves.
  await upsertJobs(db, [job(['m2-01'], 'm2-01')], 'east')
  await upsertJobs(db, [job(['m1-01'], 'm1-01')], 'default')
  expect(await stored(db)).toEqual({ minions: '["both-01","m1-01","m2-01"]', target: 'both-01,m1-01,m2-01', source: 'default' })
})

test('one master reporting more minions later only fills what is unknown (its first report stands); a glob target is kept', async () => {
  const db = await testDb()
  await upsertJobs(db, [job(['web-01'], 'web-*', 'glob')], 'default')
  await upsertJobs(db, [job(['web-01', 'web-02'], 'web-*', 'glob')], 'default')
  expect(await stored(db)).toEqual({ minions: '["web-01"]', target: 'web-*', source: 'default' })
  await upsertJobs(db, [job(['web-03'], 'web-*', 'glob')], 'east')
  expect(await stored(db)).toEqual({ minions: '["web-01","web-03"]', target: 'web-*', source: 'default' })
  // A report that does not say which minions (the job cache's list) leaves them.
  await upsertJobs(db, [job(null, 'web-*', 'glob')], 'west')
  expect(await stored(db)).toEqual({ minions: '["web-01","web-03"]', target: 'web-*', source: 'default' })
})
