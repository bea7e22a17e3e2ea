// Runners and orchestration (issue 26 item 5, contract §16) against the fake salt-api: POST /api/run {client: "runner"}
// with its own permission, the runner's job indexed at once and its return read from salt's job cache, an
// orchestration's page listing its child jobs (each step's `__jid__`) with their outcomes.
import { afterEach, describe, expect, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { userWith } from '../helpers/grants'
import { until } from '../helpers/until'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w?.close())

/** How long to wait for a runner's return: it is looked for in the job cache every 2 s. */
const FOLLOW = { ms: 15_000, every: 100 }

const started = () => w.salt.calls.filter((c) => c.client === 'runner_async')

describe('runners', () => {
  test('an orchestration: 202 with its jid, listed at once as the caller\'s and running; then finished with its child jobs and their outcomes', async () => {
    w = await saltWorld()
    await w.rt.scheduler.run('keys')
    const r = await call(w, 'POST', '/api/run', { body: { client: 'runner', fun: 'state.orchestrate', kwarg: { mods: 'orch.demo' } } })
    expect(r).toMatchObject({ status: 202, body: { minions: [] } })
    const jid = r.body.jid as string
    expect(started()).toMatchObject([{ fun: 'state.orchestrate' }])
    // Indexed the moment salt answered, before its return: the Jobs list and the feed show it.
    expect((await w.get('/api/jobs')).jobs[0]).toMatchObject({ jid, fun: 'runner.state.orchestrate', tgt_type: 'runner', initiator: 'admin', status: 'running', kwargs: { mods: 'orch.demo' } })
    expect((await w.get(`/api/activity?jid=${jid}`)).events.map((e: any) => e.event_type)).toEqual(['job.new'])
    const done = await until(async () => {
      const j = await w.get(`/api/jobs/${jid}`)
      return j.status === 'finished' ? j : null
    }, 'the runner return read from the job cache', FOLLOW)
    expect(done).toMatchObject({ returned: 1, failed: 0, minions: ['master_master'], returns: [{ minion_id: 'master_master', success: true, retcode: 0 }] })
    // The children: each step's job, once the jobs poller (or the stream) has indexed them, with its outcome.
    await w.rt.scheduler.run('jobs')
    const j = await w.get(`/api/jobs/${jid}`)
    expect(j.children.map((c: any) => c.step)).toEqual(['orch-demo', 'orch-ping'])
    expect(j.children[0].job).toMatchObject({ fun: 'state.sls', returned: 2, failed: 0, status: 'finished' })
    expect(j.children[1].job).toMatchObject({ fun: 'test.ping', target: 'db-01', returned: 1, status: 'finished' })
    expect(j.children.map((c: any) => c.jid)).toEqual([...w.salt.jobs.keys()].filter((k) => k !== jid))
    expect((await w.get('/api/audit?action=job.run')).entries[0]).toMatchObject({ username: 'admin', ok: true, target: 'runner state.orchestrate', detail: `jid ${jid}` })
  })

  test('another runner: its return stored, no children', async () => {
    w = await saltWorld()
    const r = await call(w, 'POST', '/api/run', { body: { client: 'runner', fun: 'test.arg', arg: ['a'], kwarg: { k: 1 } } })
    expect(r.status).toBe(202)
    const j = await until(async () => {
      const x = await w.get(`/api/jobs/${r.body.jid}`)
      return x.status === 'finished' ? x : null
    }, 'the runner return', FOLLOW)
    expect(j).toMatchObject({ arguments: ['a'], kwargs: { k: 1 }, children: [], returns: [{ return: { args: ['a'], kwargs: { k: 1 } } }] })
  })

  test('its own permission: execute runner:<fun> on every minion; the operator (execute salt:*) is refused; refusals audited, nothing started', async () => {
    w = await saltWorld()
    const body = { client: 'runner', fun: 'state.orchestrate', kwarg: { mods: 'orch.demo' } }
    expect(await call(w, 'POST', '/api/run', { who: 'operator', body })).toMatchObject({ status: 403, body: { detail: 'Not allowed: runner state.orchestrate' } })
    // `execute *` scoped to some minions covers runner:… by its glob, but a runner reaches every minion: refused.
    const scoped = await userWith(w, 'web-all', [['execute', '*', 'web-*']])
    expect((await call(w, 'POST', '/api/run', { who: { token: scoped.token }, body })).status).toBe(403)
    const other = await userWith(w, 'jobs-runner', [['execute', 'runner:jobs.*']])
    expect(await call(w, 'POST', '/api/run', { who: { token: other.token }, body })).toMatchObject({ status: 403, body: { detail: 'Not allowed: runner state.orchestrate' } })
    expect(started()).toEqual([])
    const orch = await userWith(w, 'orch', [['execute', 'runner:state.orchestrate']])
    expect((await call(w, 'POST', '/api/run', { who: { token: orch.token }, body })).status).toBe(202)
    // A runner grant is no grant on salt functions: the same user runs no command on a minion.
    expect((await call(w, 'POST', '/api/run', { who: { token: orch.token }, body: { tgt: '*', fun: 'test.ping' } })).status).toBe(403)
    const audit = (await w.get('/api/audit?action=job.run')).entries
    expect(audit.filter((e: any) => !e.ok)).toHaveLength(4)
  })

  test('bad input: a runner takes no target, a command needs one (422, nothing started)', async () => {
    w = await saltWorld()
    const a = await call(w, 'POST', '/api/run', { body: { client: 'runner', fun: 'test.arg', tgt: '*' } })
    expect(a).toMatchObject({ status: 422, body: { detail: [{ type: 'value_error', loc: ['body', 'tgt'], msg: 'Value error, a runner runs on the master and takes no target' }] } })
    const b = await call(w, 'POST', '/api/run', { body: { fun: 'test.ping' } })
    expect(b).toMatchObject({ status: 422, body: { detail: [{ type: 'missing', loc: ['body', 'tgt'], msg: 'Field required' }] } })
    const c = await call(w, 'POST', '/api/run', { body: { client: 'wheel', fun: 'key.list_all' } })
    expect(c).toMatchObject({ status: 422, body: { detail: [{ loc: ['body', 'client'] }] } })
    expect(w.salt.calls.filter((x) => x.client !== 'runner' || x.fun !== 'cache.grains')).toEqual([])
    // Bad input changes nothing, the audit log included.
    expect((await w.get('/api/audit?action=job.run')).total).toBe(0)
  })
})
