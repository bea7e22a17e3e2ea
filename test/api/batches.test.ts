// Proves batched runs (contract §16) against the fake salt-api: the checked list published in slices, the next slice
// when the previous one returned (stored returns from the event bus) or timed out, batch_wait, stop on failure, one audit entry.
import { afterEach, describe, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { until } from '../helpers/until'
import { SLICE_TIMEOUT_MS, advanceBatches } from '../../src/features/batches/service'
import { sql } from '../../src/db/sql'
import { batches } from '../../src/db/schema'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w?.close())

/** A fleet of five with the event stream on, so returns are stored as they arrive. */
async function streaming(ids = ['a-01', 'a-02', 'a-03', 'a-04', 'a-05']) {
  w = await saltWorld(ids)
  await call(w, 'PUT', '/api/admin/settings/pollers', { body: { event_stream_enabled: true } })
  await until(() => w.salt.streamCount === 1, 'the stream connected')
}
const published = () => w.salt.calls.filter((c) => c.client === 'local_async').map((c) => c.tgt)
const batch = async (id: string) => (await call(w, 'GET', `/api/batches/${id}`)).body
/** Steps the batch until its slice `n` has all its returns stored. */
const returned = (id: string, n: number) => until(async () => {
  const b = await batch(id)
  return b.slices[n].returned === b.slices[n].minions.length
}, `slice ${n} returned`)

describe('POST /api/run with batch', () => {
  test('batch 2 of five minions: 202 at once with the first jid, then each slice when the previous one returned; done; audited once with the batch id', async () => {
    await streaming()
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'a-*', fun: 'test.ping', batch: 2 } })
    expect(r.status).toBe(202)
    expect(r.body.minions).toEqual(['a-01', 'a-02', 'a-03', 'a-04', 'a-05'])
    expect(typeof r.body.batch_id).toBe('string')
    expect(published()).toEqual([['a-01', 'a-02']])
    expect(w.salt.jobs.get(r.body.jid)!.minions).toEqual(['a-01', 'a-02'])
    const id = r.body.batch_id
    // Nothing moves until the first slice's returns are stored.
    await returned(id, 0)
    expect(published()).toHaveLength(1)
    await w.rt.advanceBatches()
    expect(published()).toEqual([['a-01', 'a-02'], ['a-03', 'a-04']])
    await returned(id, 1)
    await w.rt.advanceBatches()
    await returned(id, 2)
    await w.rt.advanceBatches()
    const b = await batch(id)
    expect(b).toMatchObject({ id, state: 'done', fun: 'test.ping', size: 2, batch_wait: 0, batch_stop_on_failure: false, initiator: 'admin' })
    expect(b.slices.map((s: any) => [s.minions, s.returned, s.failed])).toEqual([[['a-01', 'a-02'], 2, 0], [['a-03', 'a-04'], 2, 0], [['a-05'], 1, 0]])
    expect(b.slices[0].jid).toBe(r.body.jid)
    expect(published()).toHaveLength(3)
    const audit = (await call(w, 'GET', '/api/audit?action=job.run')).body.entries
    expect(audit.map((e: any) => e.detail)).toEqual([`jid ${r.body.jid}, batch ${id}`])
    // Each slice is a job of the user who started the batch.
    const jobs = (await call(w, 'GET', '/api/jobs?user=admin')).body.jobs
    expect(jobs.map((j: any) => j.jid).sort()).toEqual(b.slices.map((s: any) => s.jid).sort())
  })

  test('"40%" of five is slices of two; batch_wait holds the next slice that many seconds after the previous one returned', async () => {
    await streaming()
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'a-*', fun: 'test.ping', batch: '40%', batch_wait: 30 } })
    expect(r.status).toBe(202)
    const id = r.body.batch_id
    expect((await batch(id)).slices.map((s: any) => s.minions.length)).toEqual([2, 2, 1])
    await returned(id, 0)
    await w.rt.advanceBatches()
    expect(published()).toHaveLength(1)
    w.clock.advance(29_000)
    await w.rt.advanceBatches()
    expect(published()).toHaveLength(1)
    w.clock.advance(1_000)
    await w.rt.advanceBatches()
    expect(published()).toEqual([['a-01', 'a-02'], ['a-03', 'a-04']])
  })

  test('stop on failure: a slice with a failed return stops the batch; the later slices are never published', async () => {
    await streaming(['b-01', 'b-02', 'b-03'])
    w.salt.minions.get('b-01')!.stateReturn = { 'x_|-x_|-x_|-run': { name: 'x', result: false, comment: 'failed', changes: {}, __run_num__: 0 } }
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'b-*', fun: 'state.apply', batch: 1, batch_stop_on_failure: true } })
    expect(r.status).toBe(202)
    await returned(r.body.batch_id, 0)
    await w.rt.advanceBatches()
    const b = await batch(r.body.batch_id)
    expect(b.state).toBe('stopped')
    expect(b.slices.map((s: any) => [s.jid !== null, s.returned, s.failed])).toEqual([[true, 1, 1], [false, 0, 0], [false, 0, 0]])
    w.clock.advance(SLICE_TIMEOUT_MS)
    await w.rt.advanceBatches()
    expect(published()).toEqual([['b-01']])
  })

  test('a minion that never returns: its slice times out, the missing minion counts as failed, the batch goes on without stop on failure', async () => {
    await streaming(['c-01', 'c-02'])
    w.salt.minions.get('c-01')!.online = false
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'c-*', fun: 'test.ping', batch: 1 } })
    const id = r.body.batch_id
    await w.rt.advanceBatches()
    expect(published()).toEqual([['c-01']])
    w.clock.advance(SLICE_TIMEOUT_MS)
    await w.rt.advanceBatches()
    expect(published()).toEqual([['c-01'], ['c-02']])
    expect((await batch(id)).slices[0]).toMatchObject({ returned: 0, failed: 1 })
    await returned(id, 1)
    await w.rt.advanceBatches()
    expect((await batch(id)).state).toBe('done')
  })

  test('two steps at once (the start and the runtime tick, or two instances) publish a slice once', async () => {
    await streaming(['f-01', 'f-02'])
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'f-*', fun: 'test.ping', batch: 1 } })
    await returned(r.body.batch_id, 0)
    await Promise.all([advanceBatches(w.deps, w.rt.client), advanceBatches(w.deps, w.rt.client), w.rt.advanceBatches()])
    expect(published()).toEqual([['f-01'], ['f-02']])
    const b = await batch(r.body.batch_id)
    expect(w.salt.jobs.has(b.slices[1].jid)).toBe(true)
  })

  test('a restart: a new runtime on the same database resumes the batch where it stood, without republishing the published slice', async () => {
    await streaming(['e-01', 'e-02'])
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'e-*', fun: 'test.ping', batch: 1 } })
    await returned(r.body.batch_id, 0)
    await w.rt.stop()
    const { SaltRuntime } = await import('../../src/runtime')
    const again = new SaltRuntime(w.deps, { client: { backoffMs: 1, sleep: async () => {} } })
    await again.advanceBatches()
    await again.advanceBatches()
    expect(published()).toEqual([['e-01'], ['e-02']])
    const b = await batch(r.body.batch_id)
    expect(b.slices.map((s: any) => s.jid !== null)).toEqual([true, true])
    expect(b.slices[0].jid).toBe(r.body.jid)
  })

  test('salt refusing a later slice ends the batch failed, saying why', async () => {
    await streaming(['d-01', 'd-02'])
    const r = await call(w, 'POST', '/api/run', { body: { tgt: 'd-*', fun: 'test.ping', batch: 1 } })
    await returned(r.body.batch_id, 0)
    w.salt.down = true
    await w.rt.advanceBatches()
    const b = await batch(r.body.batch_id)
    expect(b.state).toBe('failed')
    expect(typeof b.error).toBe('string')
    expect(b.slices[1].jid).toBeNull()
  })

  test('the whole target is checked first: a batch reaching a minion outside the grants is refused and nothing is stored or published', async () => {
    await streaming(['web-01', 'db-01'])
    const role = (await call(w, 'POST', '/api/roles', { body: { name: 'webs' } })).body
    await call(w, 'POST', `/api/roles/${role.id}/permissions`, { body: { verb: 'execute', resource_glob: 'salt:test.*', target_glob: 'web-*' } })
    const { createUser } = await import('../../src/features/users/service')
    const { createSession } = await import('../../src/features/auth/service')
    const u = await createUser(w.deps, { username: 'webber', password: 'password-123', must_change_pw: false, roles: [role.id] })
    const r = await call(w, 'POST', '/api/run', { who: { token: (await createSession(w.deps, u.id)).token }, body: { tgt: '*', fun: 'test.ping', batch: 1 } })
    expect(r).toMatchObject({ status: 403, body: { detail: 'Not allowed: test.ping on 1 minions (db-01)' } })
    expect(published()).toEqual([])
    expect(await w.deps.db.row(sql`SELECT count(*) AS n FROM ${batches}`)).toEqual({ n: 0 })
  })

  test('bad batch options are a 422 that publishes nothing; an unknown batch is a 404', async () => {
    await streaming()
    for (const extra of [{ batch: 0 }, { batch: '0%' }, { batch: '101%' }, { batch: '10' }, { batch: 2, batch_wait: 3601 }, { batch: 2, batch_wait: -1 }]) {
      const r = await call(w, 'POST', '/api/run', { body: { tgt: 'a-*', fun: 'test.ping', ...extra } })
      expect({ extra, status: r.status }).toEqual({ extra, status: 422 })
    }
    expect(published()).toEqual([])
    expect(await call(w, 'GET', '/api/batches/nope')).toMatchObject({ status: 404, body: { detail: 'Batch not found' } })
  })
})
