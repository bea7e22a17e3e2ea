// Proves contract §15 "Several masters" at runtime: one registry of salt sources, each with its own client, event stream and
// pollers (started, restarted and stopped with the source), Salt health, /metrics and the unreachable alerts per source.
import { describe, expect, test } from 'bun:test'
import { FakeSalt, newJid } from '../helpers/fake-salt'
import { saltWorld } from '../helpers/salt-world'
import { call } from '../helpers/app'
import { until } from '../helpers/until'
import { SourceRegistry } from '../../src/source-registry'
import { SOURCE_POLLERS } from '../../src/runtime'
import { watchTime } from '../../src/features/alerts/watch'
import { sql } from '../../src/db/sql'
import { PollerBusy } from '../../src/lib/errors'
import type { SaltRuntime } from '../../src/runtime'

/**
 * Runs a poller of a runtime by hand. A source's runtime ticks presence, keys and jobs by itself the moment its salt-api
 * first answers: a hand run meeting one of those waits for it to end rather than failing with PollerBusy.
 */
async function tick(rt: SaltRuntime, name: string) {
  for (const end = Date.now() + 10_000; ; await Bun.sleep(20)) {
    try {
      return await rt.scheduler.run(name)
    } catch (e) {
      if (!(e instanceof PollerBusy) || Date.now() > end) throw e
    }
  }
}

/** A world on the fake `default` master plus a second fake master and the registry, as serve wires them. */
async function twoMasters() {
  const w = await saltWorld(['web-01', 'shared-01'])
  const east = new FakeSalt().start().addMinions(['east-01', 'shared-01'])
  const registry = new SourceRegistry(w.deps, w.rt, { client: { backoffMs: 1, sleep: async () => {} }, streamBackoff: { firstMs: 10, maxMs: 40, probeMs: 20, brokenRetryMs: 200 }, probeMs: 50, masterTimeoutMs: 5000 })
  w.deps.onSaltSourceChanged = (n) => void registry.changed(n)
  const add = async (name: string, salt: FakeSalt) => {
    expect((await call(w, 'POST', '/api/admin/salt-sources', { body: { name, url: salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret' } })).status).toBe(201)
    await registry.changed(name)
  }
  return { w, east, registry, add, async close() { await registry.stop(); east.stop(); await w.close() } }
}

describe('salt sources at runtime', () => {
  test('an added source runs its own client, stream and pollers against its own master; a removed one stops', async () => {
    const t = await twoMasters()
    try {
      await t.registry.start()
      expect(t.registry.sides().map((s) => s.source)).toEqual(['default'])
      await t.add('east', t.east)
      const rt = t.registry.runtime('east')!
      expect(rt.source).toBe('east')
      expect(rt.scheduler.names).toEqual([...SOURCE_POLLERS])
      expect(t.registry.sides().map((s) => s.source)).toEqual(['default', 'east'])
      // Its event stream: a job published on east's bus is stored.
      await until(() => t.east.streamCount > 0, "east's event stream")
      const jid = newJid()
      t.east.publish(`salt/job/${jid}/new`, { jid, fun: 'test.ping', tgt: 'east-01', tgt_type: 'glob', user: 'root', minions: ['east-01'], arg: [] })
      await until(async () => (await call(t.w, 'GET', `/api/jobs/${jid}`)).status === 200, 'the job from east stored')
      // Its pollers ask east, not default.
      const before = t.w.salt.calls.length
      await tick(rt, 'jobs')
      expect(t.east.calls.some((c) => c.fun === 'jobs.list_jobs')).toBe(true)
      expect(t.w.salt.calls.slice(before).some((c) => c.fun === 'jobs.list_jobs')).toBe(false)
      expect(rt.client.reachability().up).toBe(true)
      // Removed: its runtime stops and its stream closes.
      expect((await call(t.w, 'DELETE', '/api/admin/salt-sources/east')).status).toBe(204)
      await t.registry.changed('east')
      expect(t.registry.runtime('east')).toBeUndefined()
      expect(t.registry.sides().map((s) => s.source)).toEqual(['default'])
      await until(() => t.east.streamCount === 0, "east's stream closed")
    } finally {
      await t.close()
    }
  })

  test("presence is unknown only for the minions of a source whose salt-api is gone; a minion of two masters stays known", async () => {
    const t = await twoMasters()
    try {
      await t.registry.start()
      await t.add('east', t.east)
      const rt = t.registry.runtime('east')!
      const presence = async () => Object.fromEntries((await call(t.w, 'GET', '/api/minions')).body.minions.map((m: { id: string; presence: string }) => [m.id, m.presence]))
      await tick(t.w.rt, 'presence')
      await tick(rt, 'presence')
      expect(await presence()).toEqual({ 'east-01': 'online', 'shared-01': 'online', 'web-01': 'online' })
      // East's master and salt-api gone: its stream drops and its calls fail.
      t.east.stop()
      await tick(rt, 'presence').catch(() => {})
      await until(() => !rt.presenceKnown() || null, "east's presence no longer known")
      expect(t.w.rt.presenceKnown()).toBe(true)
      expect(await presence()).toEqual({ 'east-01': 'unknown', 'shared-01': 'online', 'web-01': 'online' })
      expect((await call(t.w, 'GET', '/api/minions/east-01')).body.presence).toBe('unknown')
      expect((await call(t.w, 'GET', '/api/minions/shared-01')).body.presence).toBe('online')
    } finally {
      await t.close()
    }
  })

  test('keys carry the sources they were seen through, with a source filter', async () => {
    const t = await twoMasters()
    try {
      await t.registry.start()
      await t.add('east', t.east)
      await tick(t.w.rt, 'keys')
      await tick(t.registry.runtime('east')!, 'keys')
      const all = (await call(t.w, 'GET', '/api/keys')).body
      expect(all.accepted).toEqual(['east-01', 'shared-01', 'web-01'])
      expect(all.sources).toEqual({ 'east-01': ['east'], 'shared-01': ['default', 'east'], 'web-01': ['default'] })
      const east = (await call(t.w, 'GET', '/api/keys?source=east')).body
      expect(east.accepted).toEqual(['east-01', 'shared-01'])
      expect(Object.keys(east.sources).sort()).toEqual(['east-01', 'shared-01'])
      const none = (await call(t.w, 'GET', '/api/keys?source=nope')).body
      expect([none.accepted, none.pending, none.sources]).toEqual([[], [], {}])
    } finally {
      await t.close()
    }
  })

  test('changes whose notices were lost (the bus reconnected) are applied by a resync; unchanged runtimes are left running', async () => {
    const t = await twoMasters()
    const west = new FakeSalt().start().addMinions(['west-01'])
    try {
      await t.registry.start()
      await t.add('east', t.east)
      const eastRt = t.registry.runtime('east')
      // Another instance adds west and deletes east while this one hears nothing.
      t.w.deps.onSaltSourceChanged = undefined
      expect((await call(t.w, 'POST', '/api/admin/salt-sources', { body: { name: 'west', url: west.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret' } })).status).toBe(201)
      expect(t.registry.runtime('west')).toBeUndefined()
      await t.registry.resync()
      expect(t.registry.runtime('west')?.source).toBe('west')
      // East was not touched: the same runtime, not restarted.
      expect(t.registry.runtime('east')).toBe(eastRt)
      expect((await call(t.w, 'DELETE', '/api/admin/salt-sources/east')).status).toBe(204)
      await t.registry.resync()
      expect(t.registry.sides().map((s) => s.source)).toEqual(['default', 'west'])
    } finally {
      await t.close()
      west.stop()
    }
  })

  test("a changed source logs in again with its new connection; default's salt section never reaches it", async () => {
    const t = await twoMasters()
    const west = new FakeSalt().start().addMinions(['west-01'])
    west.users.set('other', 'w3st')
    try {
      await t.add('east', t.east)
      const rt = t.registry.runtime('east')!
      await tick(rt, 'grains')
      expect(t.east.calls.some((c) => c.fun === 'grains.items')).toBe(true)
      expect((await call(t.w, 'PUT', '/api/admin/salt-sources/east', { body: { url: west.url, username: 'other', password: 'w3st' } })).status).toBe(200)
      await t.registry.changed('east')
      expect(t.registry.runtime('east')).toBe(rt)
      await tick(rt, 'grains')
      expect(west.calls.some((c) => c.fun === 'grains.items')).toBe(true)
      expect(rt.client.reachability().up).toBe(true)
      // The salt section is default's alone: changing it leaves east's connection as it is.
      await call(t.w, 'PUT', '/api/admin/settings/salt', { body: { username: 'someone-else' } })
      const westCalls = west.calls.length
      await tick(rt, 'grains')
      expect(west.calls.length).toBeGreaterThan(westCalls)
    } finally {
      west.stop()
      await t.close()
    }
  })

  test('Salt health and /metrics show every source by name', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      t.east.down = true
      await tick(t.registry.runtime('east')!, 'jobs')
      const h = (await call(t.w, 'GET', '/api/salt/health')).body
      expect(h.sources.map((s: any) => s.name)).toEqual(['default', 'east'])
      const east = h.sources[1]
      expect(east).toMatchObject({ name: 'east', configured: true, salt_api: { reachable: false } })
      expect(east.pollers.map((p: any) => p.name)).toEqual([...SOURCE_POLLERS])
      expect(east.pollers.find((p: any) => p.name === 'jobs').last_error).not.toBeNull()
      expect(h.problems.some((p: string) => p.startsWith('Salt source east: salt-api does not answer'))).toBe(true)
      const text = String((await call(t.w, 'GET', '/metrics')).body)
      expect(text).toContain('\nsaltdeck_salt_api_up{source="east"} 0\n')
      // At least the tick run here (the stream going down retimes the jobs poller, which may tick again meanwhile).
      const errors = Number(/\nsaltdeck_poller_errors_total\{source="east",poller="jobs"\} (\d+)\n/.exec(text)?.[1])
      expect(errors).toBeGreaterThanOrEqual(1)
      expect(text).toContain('\nsaltdeck_poller_errors_total{source="default",poller="jobs"} 0\n')
      expect(text).not.toContain('saltdeck_poller_runs_total{source="east",poller="inventory"}')
    } finally {
      await t.close()
    }
  })

  test('salt_unreachable names the source that does not answer, and resolves when it answers or is removed', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      expect((await call(t.w, 'POST', '/api/alerts/rules', { body: { name: 'salt down', kind: 'salt_unreachable', params: { for_minutes: 1 } } })).status).toBe(201)
      await tick(t.w.rt, 'keys')
      t.east.down = true
      await tick(t.registry.runtime('east')!, 'jobs')
      t.w.clock.advance(61_000)
      await watchTime(t.w.deps)
      const firing = async () => (await call(t.w, 'GET', '/api/alerts?state=firing')).body.alerts
      const [a, ...rest] = await firing()
      expect(rest).toEqual([])
      expect(a).toMatchObject({ kind: 'salt_unreachable', subject: 'salt-api:east', details: { source: 'east' } })
      expect(a.summary).toStartWith('salt source east: salt-api does not answer')
      t.east.down = false
      await tick(t.registry.runtime('east')!, 'jobs')
      await watchTime(t.w.deps)
      expect(await firing()).toEqual([])
      // Down again, then removed: nothing will answer for it any more.
      t.east.down = true
      await tick(t.registry.runtime('east')!, 'jobs')
      t.w.clock.advance(61_000)
      await watchTime(t.w.deps)
      expect((await firing()).map((x: any) => x.subject)).toEqual(['salt-api:east'])
      await call(t.w, 'DELETE', '/api/admin/salt-sources/east')
      await t.registry.changed('east')
      await watchTime(t.w.deps)
      expect(await firing()).toEqual([])
    } finally {
      await t.close()
    }
  })

  test('what each master reports is recorded with its source; a minion of both masters is one minion with both', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      const east = t.registry.runtime('east')!
      await tick(t.w.rt, 'keys')
      await tick(east, 'keys')
      const list = async (q = '') => (await call(t.w, 'GET', `/api/minions${q}`)).body
      expect((await list()).minions.map((m: any) => [m.id, m.key_state, m.sources])).toEqual([
        ['east-01', 'accepted', ['east']], ['shared-01', 'accepted', ['default', 'east']], ['web-01', 'accepted', ['default']],
      ])
      expect((await call(t.w, 'GET', '/api/minions/shared-01')).body.sources).toEqual(['default', 'east'])
      expect((await list('?source=east')).minions.map((m: any) => m.id)).toEqual(['east-01', 'shared-01'])
      expect((await list('?source=default')).minions.map((m: any) => m.id)).toEqual(['shared-01', 'web-01'])
      // An unknown source is an empty list, not an error.
      expect(await list('?source=nowhere')).toEqual({ total: 0, minions: [] })
      // Key events came through the master that listed them: the very first list is quiet (contract §6's keys poller),
      // east's first list then accepts east-01 (new to Saltdeck) and leaves shared-01 (already accepted) alone.
      const acts = (await call(t.w, 'GET', '/api/activity?event_type=key.accept&limit=50')).body.events
      expect(acts.map((e: any) => [e.minion_id, e.source])).toEqual([['east-01', 'east']])
      // The filter: east's events only (its key change, and whatever its presence ticks saw of its two minions).
      const fromEast = (await call(t.w, 'GET', '/api/activity?source=east&limit=500')).body.events
      expect(fromEast.map((e: any) => e.source)).toEqual(fromEast.map(() => 'east'))
      expect(fromEast.some((e: any) => e.event_type === 'key.accept' && e.minion_id === 'east-01')).toBe(true)
      expect(fromEast.filter((e: any) => e.minion_id === 'web-01')).toEqual([])
      const all = (await call(t.w, 'GET', '/api/activity?limit=500')).body
      expect((await call(t.w, 'GET', '/api/activity?source=default&limit=500')).body.total + fromEast.length).toBe(all.total)
      expect((await call(t.w, 'GET', '/api/activity?source=nowhere')).body).toEqual({ total: 0, events: [] })
      // One master's list does not speak for the other's minions: each tick again, nothing is deleted.
      await tick(t.w.rt, 'keys')
      await tick(east, 'keys')
      expect((await list()).minions.map((m: any) => m.key_state)).toEqual(['accepted', 'accepted', 'accepted'])
      // A key gone from east: deleted for the minion only east knows, kept for the one default still holds.
      t.east.minions.delete('east-01')
      t.east.minions.delete('shared-01')
      await tick(east, 'keys')
      expect((await list()).minions.map((m: any) => [m.id, m.key_state])).toEqual([['east-01', null], ['shared-01', 'accepted'], ['web-01', 'accepted']])
    } finally {
      await t.close()
    }
  })

  test("presence from one master marks offline only the minions no other master has seen", async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      const east = t.registry.runtime('east')!
      await tick(t.w.rt, 'keys')
      await tick(east, 'keys')
      await tick(t.w.rt, 'presence')
      await tick(east, 'presence')
      const online = async () => Object.fromEntries((await call(t.w, 'GET', '/api/minions')).body.minions.map((m: any) => [m.id, m.online]))
      expect(await online()).toEqual({ 'east-01': true, 'shared-01': true, 'web-01': true })
      t.east.minions.get('east-01')!.online = false
      t.w.salt.minions.get('web-01')!.online = false
      await tick(east, 'presence')
      await tick(t.w.rt, 'presence')
      expect(await online()).toEqual({ 'east-01': false, 'shared-01': true, 'web-01': false })
      const offline = (await call(t.w, 'GET', '/api/activity?event_type=minion.offline')).body.events
      expect(offline.map((e: any) => [e.minion_id, e.source]).sort()).toEqual([['east-01', 'east'], ['web-01', 'default']])
    } finally {
      await t.close()
    }
  })

  test("jobs, returns and runs from a master's bus carry its source; the jobs list filters by it", async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      await tick(t.registry.runtime('east')!, 'keys')
      await until(() => t.east.streamCount > 0, "east's event stream")
      const jid = newJid()
      t.east.publish(`salt/job/${jid}/new`, { jid, fun: 'state.apply', tgt: 'east-01', tgt_type: 'glob', user: 'root', arg: [], minions: ['east-01'] })
      t.east.publish(`salt/job/${jid}/ret/east-01`, {
        id: 'east-01', jid, fun: 'state.apply', fun_args: [], retcode: 0, success: true,
        return: { 'file_|-motd_|-/etc/motd_|-managed': { result: true, changes: {}, comment: 'ok', duration: 1.5, __run_num__: 0, __sls__: 'motd' } },
      })
      await until(async () => (await call(t.w, 'GET', '/api/minions/east-01/runs')).body.total === 1, 'the run from east stored')
      const jobs = async (q: string) => (await call(t.w, 'GET', `/api/jobs${q}`)).body
      expect((await jobs('?source=east')).jobs.map((j: any) => [j.jid, j.source])).toEqual([[jid, 'east']])
      expect((await jobs('?source=default')).jobs.map((j: any) => j.jid)).not.toContain(jid)
      expect(await jobs('?source=nowhere')).toEqual({ total: 0, jobs: [] })
      expect((await call(t.w, 'GET', `/api/jobs/${jid}`)).body.source).toBe('east')
      expect(await t.w.deps.db.rows(sql`SELECT source FROM runs WHERE jid = ${jid}`)).toEqual([{ source: 'east' }])
      // A minion's runs carry their source and filter by it (an unknown source: nothing).
      const runs = async (q: string) => (await call(t.w, 'GET', `/api/minions/east-01/runs${q}`)).body
      expect((await runs('')).runs.map((r: any) => [r.jid, r.source])).toEqual([[jid, 'east']])
      expect((await runs('?source=east')).total).toBe(1)
      expect(await runs('?source=default')).toEqual({ minion_id: 'east-01', total: 0, runs: [] })
      expect((await runs('?source=nowhere')).total).toBe(0)
      const exported = String((await call(t.w, 'GET', '/api/minions/east-01/runs?format=csv&source=east')).body).trim().split('\r\n')
      expect(exported).toHaveLength(2)
      expect(exported[0]!.endsWith(',source')).toBe(true)
      expect(exported[1]!.endsWith(',east')).toBe(true)
      const ev = (await call(t.w, 'GET', `/api/activity?jid=${jid}`)).body.events
      expect(ev.map((e: any) => [e.event_type, e.source]).sort()).toEqual([['job.new', 'east'], ['job.ret', 'east']])
    } finally {
      await t.close()
    }
  })

  test('a removed source no longer counts among its minions\' sources, and the remaining lists speak for them again', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      await tick(t.w.rt, 'keys')
      await tick(t.registry.runtime('east')!, 'keys')
      await call(t.w, 'DELETE', '/api/admin/salt-sources/east')
      await t.registry.changed('east')
      expect((await call(t.w, 'GET', '/api/minions/shared-01')).body.sources).toEqual(['default'])
      // The list says the same (it reads each minion's kept list of sources): east-01 is now seen through none.
      expect((await call(t.w, 'GET', '/api/minions')).body.minions.map((m: any) => [m.id, m.sources])).toEqual([['east-01', []], ['shared-01', ['default']], ['web-01', ['default']]])
      await tick(t.w.rt, 'keys')
      expect((await call(t.w, 'GET', '/api/minions')).body.minions.map((m: any) => [m.id, m.key_state])).toEqual([['east-01', null], ['shared-01', 'accepted'], ['web-01', 'accepted']])
    } finally {
      await t.close()
    }
  })

  test('a job goes to the master(s) whose minions the target matches, once per minion, under one jid', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      // Both buses read: each master's job.new of the one jid arrives.
      expect((await call(t.w, 'PUT', '/api/admin/settings/pollers', { body: { event_stream_enabled: true } })).status).toBe(200)
      await until(() => t.east.streamCount > 0 && t.w.salt.streamCount > 0, 'both event streams')
      await tick(t.w.rt, 'keys')
      await tick(t.registry.runtime('east')!, 'keys')
      // Both masters' event streams, as a running service has them.
      void t.w.rt.stream.start()
      await until(() => t.w.salt.streamCount > 0 && t.east.streamCount > 0, 'both event streams')
      const preview = await call(t.w, 'POST', '/api/run/preview', { body: { tgt: '*', tgt_type: 'glob' } })
      expect(preview.body).toMatchObject({ count: 3, minions: ['east-01', 'shared-01', 'web-01'] })
      const r = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(r.status).toBe(202)
      expect([...r.body.minions].sort()).toEqual(['east-01', 'shared-01', 'web-01'])
      const published = (salt: FakeSalt) => salt.calls.filter((c) => c.client === 'local_async' && c.fun === 'test.ping').map((c) => c.tgt)
      // shared-01 answers to both masters: it gets the job once, through default.
      expect(published(t.w.salt)).toEqual([['shared-01', 'web-01']])
      expect(published(t.east)).toEqual([['east-01']])
      expect(t.w.salt.jobs.has(r.body.jid)).toBe(true)
      expect(t.east.jobs.has(r.body.jid)).toBe(true)
      // Each master reports only its part of the one jid on its bus (its job.new): the job lists every minion it went
      // to, whichever master's report came first.
      const job = await until(async () => ((j) => (j.minions?.length === 3 ? j : null))((await call(t.w, 'GET', `/api/jobs/${r.body.jid}`)).body), 'the job with both parts', { ms: 5000 })
      expect({ minions: job.minions, target: job.target }).toEqual({ minions: ['east-01', 'shared-01', 'web-01'], target: 'east-01,shared-01,web-01' })
      expect(['default', 'east']).toContain(job.source)
      expect((await call(t.w, 'POST', `/api/jobs/${r.body.jid}/kill`)).status).toBe(202)
      const kills = (salt: FakeSalt) => salt.calls.filter((c) => c.fun === 'saltutil.kill_job').map((c) => [...(c.tgt as string[])].sort())
      // Each minion once, through a master that has it; shared-01 (both) through the job's source, whichever master's
      // job.new was stored first (the two streams race).
      const viaDefault = job.source === 'default' ? ['shared-01', 'web-01'] : ['web-01']
      expect(kills(t.w.salt)).toEqual([viaDefault])
      expect(kills(t.east)).toEqual([job.source === 'east' ? ['east-01', 'shared-01'] : ['east-01']])
      // A target only east's master matches goes to east alone.
      const only = await call(t.w, 'POST', '/api/run', { body: { tgt: 'east-*', fun: 'test.ping' } })
      expect(only.body.minions).toEqual(['east-01'])
      expect(published(t.w.salt)).toHaveLength(1)
      expect(published(t.east)).toEqual([['east-01'], ['east-01']])
    } finally {
      await t.close()
    }
  }, 20_000) // PostgreSQL under load: two streams, a publish to each master and the ingest of both parts

  test("a kill goes through the salt source the job ran through, not default's", async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      await tick(t.w.rt, 'keys')
      await tick(t.registry.runtime('east')!, 'keys')
      await until(() => t.east.streamCount > 0, "east's event stream")
      // A job started on east's master (its CLI), on a minion only east has and one both masters have.
      const jid = newJid()
      t.east.publish(`salt/job/${jid}/new`, { jid, fun: 'test.sleep', tgt: ['east-01', 'shared-01'], tgt_type: 'list', user: 'root', arg: [60], minions: ['east-01', 'shared-01'] })
      await until(async () => (await call(t.w, 'GET', `/api/jobs/${jid}`)).body.source === 'east', 'the job from east stored')
      const kills = (salt: FakeSalt) => salt.calls.filter((c) => c.fun === 'saltutil.kill_job')
      const r = await call(t.w, 'POST', `/api/jobs/${jid}/kill`)
      expect(r.status).toBe(202)
      expect(r.body).toMatchObject({ jid, skipped_sources: [] })
      expect([...r.body.minions].sort()).toEqual(['east-01', 'shared-01'])
      // shared-01 answers to both masters: its kill goes through east too, where the job runs.
      expect(kills(t.east).map((c) => c.tgt)).toEqual([['east-01', 'shared-01']])
      expect(kills(t.w.salt)).toEqual([])
      expect((await call(t.w, 'GET', `/api/jobs/${jid}`)).body.status).toBe('killed')
      // A job of default's goes to default's master.
      const mine = await call(t.w, 'POST', '/api/run', { body: { tgt: 'web-01', fun: 'test.ping' } })
      await tick(t.w.rt, 'jobs')
      expect((await call(t.w, 'GET', `/api/jobs/${mine.body.jid}`)).body.source).toBe('default')
      expect((await call(t.w, 'POST', `/api/jobs/${mine.body.jid}/kill`)).status).toBe(202)
      expect(kills(t.w.salt).map((c) => c.tgt)).toEqual([['web-01']])
      expect(kills(t.east)).toHaveLength(1)
    } finally {
      await t.close()
    }
  })

  test('a job runs on the sources that answer; the ones that refuse or do not answer in time are named as skipped', async () => {
    const t = await twoMasters()
    const hanging = new FakeSalt().start().addMinions(['slow-01'])
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') })
    const refusedUrl = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    try {
      await t.add('east', t.east)
      await tick(t.w.rt, 'keys')
      await tick(t.registry.runtime('east')!, 'keys')
      // A salt-api that refuses connections (nothing listens on its port).
      expect((await call(t.w, 'POST', '/api/admin/salt-sources', { body: { name: 'gone', url: refusedUrl, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret' } })).status).toBe(201)
      await t.registry.changed('gone')
      const r = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(r.status).toBe(202)
      expect([...r.body.minions].sort()).toEqual(['east-01', 'shared-01', 'web-01'])
      expect(r.body.skipped_sources).toHaveLength(1)
      expect(r.body.skipped_sources[0].source).toBe('gone')
      expect(r.body.skipped_sources[0].reason).toStartWith('salt-api does not answer')
      // The audit log keeps what was left out with the operator's act.
      const entry = (await call(t.w, 'GET', '/api/audit?action=job.run&limit=1')).body.entries[0]
      expect(entry.detail).toBe(`jid ${r.body.jid}; skipped gone (${r.body.skipped_sources[0].reason})`)
      // A salt-api that takes the target's matching and never answers: the job does not wait past the source's deadline.
      hanging.hold = 'cache.grains'
      await t.add('slow', hanging)
      t.registry.runtime('slow')!.routeDeadlineMs = 300
      const started = Date.now()
      const r2 = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(Date.now() - started).toBeLessThan(5000)
      expect(r2.status).toBe(202)
      expect([...r2.body.minions].sort()).toEqual(['east-01', 'shared-01', 'web-01'])
      expect(r2.body.skipped_sources.map((s: any) => s.source).sort()).toEqual(['gone', 'slow'])
      expect(r2.body.skipped_sources.find((s: any) => s.source === 'slow').reason).toBe('salt-api does not answer: no answer within 0.3 s')
      // The preview matches the same way: what the answering masters see.
      expect((await call(t.w, 'POST', '/api/run/preview', { body: { tgt: '*' } })).body).toMatchObject({ count: 3 })
      // No source takes it: the contract's 503 for salt-api not answering, and nothing is published.
      t.w.salt.down = true
      t.east.down = true
      const before = t.w.salt.calls.length + t.east.calls.length
      const none = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(none.status).toBe(503)
      expect(none.body).toEqual({ detail: 'Salt API unavailable' })
      expect([...t.w.salt.calls, ...t.east.calls].slice(before).filter((c) => c.client === 'local_async')).toEqual([])
    } finally {
      hanging.stop()
      await t.close()
    }
  })

  test('a source whose salt-api answers an error is skipped while another takes the job; every one failing so is a 502', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      await tick(t.registry.runtime('east')!, 'keys')
      // east's salt-api refuses the account: a salt-api error, not an outage.
      expect((await call(t.w, 'PUT', '/api/admin/salt-sources/east', { body: { password: 'wrong' } })).status).toBe(200)
      await t.registry.changed('east')
      const r = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(r.status).toBe(202)
      expect([...r.body.minions].sort()).toEqual(['shared-01', 'web-01'])
      expect(r.body.skipped_sources.map((s: any) => s.source)).toEqual(['east'])
      expect(r.body.skipped_sources[0].reason).toStartWith('Salt API error:')
      t.w.salt.down = true
      const none = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(none.status).toBe(502)
      expect(none.body.detail).toStartWith('Salt API error: ')
      expect(none.body).toEqual({ detail: 'Salt API error: default: salt-api answered 503; east: Could not authenticate using provided credentials' })
    } finally {
      await t.close()
    }
  })

  test('an inventory refresh asks each minion through its own master and records the salt source of each package set', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      const east = t.registry.runtime('east')!
      t.east.minions.get('east-01')!.pkgs = { nginx: ['1.22.1-9'], openssl: ['3.0.11-1~deb12u2'] }
      for (const rt of [t.w.rt, east]) {
        await tick(rt, 'keys')
        await tick(rt, 'presence')
      }
      const r = await call(t.w, 'POST', '/api/inventory/refresh', { body: {} })
      expect(r.status).toBe(202)
      const st = await until(async () => { const s = (await call(t.w, 'GET', '/api/inventory/status')).body; return s.running ? null : s }, 'the refresh done')
      expect(st.last).toMatchObject({ minions_asked: 3, minions_answered: 3, error: null })
      // Each master was asked for its own minions only; shared-01 (both masters) once, through default.
      const asked = (salt: FakeSalt) => salt.calls.filter((c) => c.fun === 'pkg.list_pkgs').flatMap((c) => c.tgt as string[]).sort()
      expect(asked(t.w.salt)).toEqual(['shared-01', 'web-01'])
      expect(asked(t.east)).toEqual(['east-01'])
      const pkgs = async (id: string) => (await call(t.w, 'GET', `/api/minions/${id}/packages`)).body
      expect(await pkgs('east-01')).toMatchObject({ salt_source: 'east', total: 2 })
      expect(await pkgs('shared-01')).toMatchObject({ salt_source: 'default' })
      // Who holds openssl, through which master; the salt_source filter (an unknown one: nobody).
      const holders = async (q = '') => (await call(t.w, 'GET', `/api/inventory/packages/openssl/minions${q}`)).body
      expect((await holders()).minions.map((m: any) => [m.minion_id, m.salt_source])).toEqual([['east-01', 'east'], ['shared-01', 'default'], ['web-01', 'default']])
      expect((await holders('?salt_source=east')).minions.map((m: any) => m.minion_id)).toEqual(['east-01'])
      expect((await holders('?salt_source=default')).total).toBe(2)
      expect((await holders('?salt_source=nowhere')).total).toBe(0)
      // The package list of one master's minions.
      const list = async (q: string) => (await call(t.w, 'GET', `/api/inventory/packages${q}`)).body
      expect((await list('?salt_source=east')).items.map((p: any) => [p.name, p.minion_count])).toEqual([['nginx', 1], ['openssl', 1]])
      expect((await list('?salt_source=default')).items.map((p: any) => [p.name, p.minion_count])).toEqual([['bash', 2], ['coreutils', 2], ['openssl', 2]])
      expect((await list('?salt_source=east&sort=minion_count&q=SSL')).items.map((p: any) => p.name)).toEqual(['openssl'])
      expect(await list('?salt_source=nowhere')).toEqual({ total: 0, items: [] })
      expect((await list('')).items.map((p: any) => [p.name, p.minion_count])).toEqual([['bash', 2], ['coreutils', 2], ['nginx', 1], ['openssl', 3]])
      // east's salt-api down: default's minions are still collected; the refresh names the master that failed.
      t.east.down = true
      await call(t.w, 'POST', '/api/inventory/refresh', { body: {} })
      const st2 = await until(async () => { const s = (await call(t.w, 'GET', '/api/inventory/status')).body; return s.running || s.last.refresh_id === st.last.refresh_id ? null : s }, 'the second refresh done')
      expect(st2.last).toMatchObject({ minions_asked: 2, minions_answered: 2 })
      expect(st2.last.error).toStartWith('salt source east: ')
      expect(asked(t.w.salt)).toEqual(['shared-01', 'shared-01', 'web-01', 'web-01'])
    } finally {
      await t.close()
    }
  })

  test('sources pointing at nowhere never make a 500: the job runs on default, the others are named as skipped', async () => {
    const t = await twoMasters()
    // A web server that is no salt-api: HTML for every path, 200 for some, 404 for others.
    const notSalt = Bun.serve({ port: 0, fetch: (req) => new Response('<html>hello</html>', { status: new URL(req.url).pathname === '/' ? 200 : 404, headers: { 'content-type': 'text/html' } }) })
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') })
    const refused = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    const bad = { refused, 'no-such-host': 'http://no-such-host.invalid:8000', 'not-salt': `http://127.0.0.1:${notSalt.port}`, 'odd-path': `${refused}/a/../b?x=1#y` }
    try {
      await tick(t.w.rt, 'keys')
      for (const [name, url] of Object.entries(bad)) {
        expect((await call(t.w, 'POST', '/api/admin/salt-sources', { body: { name, url, username: 'u', password: 'p', eauth: 'pam' } })).status).toBe(201)
        await t.registry.changed(name)
      }
      const run = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect(run.status).toBe(202)
      expect([...run.body.minions].sort()).toEqual(['shared-01', 'web-01'])
      expect(run.body.skipped_sources.map((s: any) => s.source).sort()).toEqual(Object.keys(bad).sort())
      const batch = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping', batch: 1 } })
      expect(batch.status).toBe(202)
      expect(batch.body.skipped_sources).toHaveLength(4)
      const answers = [
        run,
        await call(t.w, 'POST', '/api/run/preview', { body: { tgt: '*', fun: 'test.ping' } }),
        await call(t.w, 'POST', `/api/jobs/${run.body.jid}/kill`),
        await call(t.w, 'POST', '/api/inventory/refresh', { body: {} }),
        await call(t.w, 'GET', '/api/salt/health'),
        await call(t.w, 'GET', '/api/minions?source=refused'),
        await call(t.w, 'GET', '/api/inventory/packages?salt_source=refused'),
      ]
      for (const a of answers) expect(a.status).toBeLessThan(500)
      // Every source down, default too: the contract's 503, never a 500.
      t.w.salt.down = true
      const none = await call(t.w, 'POST', '/api/run', { body: { tgt: '*', fun: 'test.ping' } })
      expect([502, 503]).toContain(none.status)
      expect(none.body.detail).toMatch(/^Salt API (unavailable|error: )/)
    } finally {
      notSalt.stop(true)
      await t.close()
    }
  }, 60_000) // a name that does not resolve takes the resolver's seconds on each call
})
