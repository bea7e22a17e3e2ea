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

/** A world on the fake `default` master plus a second fake master and the registry, as serve wires them. */
async function twoMasters() {
  const w = await saltWorld(['web-01'])
  const east = new FakeSalt().start().addMinions(['east-01', 'east-02'])
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
      await rt.scheduler.run('jobs')
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

  test("a changed source logs in again with its new connection; default's salt section never reaches it", async () => {
    const t = await twoMasters()
    const west = new FakeSalt().start().addMinions(['west-01'])
    west.users.set('other', 'w3st')
    try {
      await t.add('east', t.east)
      const rt = t.registry.runtime('east')!
      await rt.scheduler.run('grains')
      expect(t.east.calls.some((c) => c.fun === 'grains.items')).toBe(true)
      expect((await call(t.w, 'PUT', '/api/admin/salt-sources/east', { body: { url: west.url, username: 'other', password: 'w3st' } })).status).toBe(200)
      await t.registry.changed('east')
      expect(t.registry.runtime('east')).toBe(rt)
      await rt.scheduler.run('grains')
      expect(west.calls.some((c) => c.fun === 'grains.items')).toBe(true)
      expect(rt.client.reachability().up).toBe(true)
      // The salt section is default's alone: changing it leaves east's connection as it is.
      await call(t.w, 'PUT', '/api/admin/settings/salt', { body: { username: 'someone-else' } })
      const westCalls = west.calls.length
      await rt.scheduler.run('grains')
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
      await t.registry.runtime('east')!.scheduler.run('jobs')
      const h = (await call(t.w, 'GET', '/api/salt/health')).body
      expect(h.sources.map((s: any) => s.name)).toEqual(['default', 'east'])
      const east = h.sources[1]
      expect(east).toMatchObject({ name: 'east', configured: true, salt_api: { reachable: false } })
      expect(east.pollers.map((p: any) => p.name)).toEqual([...SOURCE_POLLERS])
      expect(east.pollers.find((p: any) => p.name === 'jobs').last_error).not.toBeNull()
      expect(h.problems.some((p: string) => p.startsWith('Salt source east: salt-api does not answer'))).toBe(true)
      const text = String((await call(t.w, 'GET', '/metrics')).body)
      expect(text).toContain('\nsaltdeck_salt_api_up{source="east"} 0\n')
      expect(text).toContain('saltdeck_poller_errors_total{source="east",poller="jobs"} 1\n')
      expect(text).not.toContain('saltdeck_poller_runs_total{source="east",poller="keys"}')
    } finally {
      await t.close()
    }
  })

  test('salt_unreachable names the source that does not answer, and resolves when it answers or is removed', async () => {
    const t = await twoMasters()
    try {
      await t.add('east', t.east)
      expect((await call(t.w, 'POST', '/api/alerts/rules', { body: { name: 'salt down', kind: 'salt_unreachable', params: { for_minutes: 1 } } })).status).toBe(201)
      await t.w.rt.scheduler.run('keys')
      t.east.down = true
      await t.registry.runtime('east')!.scheduler.run('jobs')
      t.w.clock.advance(61_000)
      await watchTime(t.w.deps)
      const firing = async () => (await call(t.w, 'GET', '/api/alerts?state=firing')).body.alerts
      const [a, ...rest] = await firing()
      expect(rest).toEqual([])
      expect(a).toMatchObject({ kind: 'salt_unreachable', subject: 'salt-api:east', details: { source: 'east' } })
      expect(a.summary).toStartWith('salt source east: salt-api does not answer')
      t.east.down = false
      await t.registry.runtime('east')!.scheduler.run('jobs')
      await watchTime(t.w.deps)
      expect(await firing()).toEqual([])
      // Down again, then removed: nothing will answer for it any more.
      t.east.down = true
      await t.registry.runtime('east')!.scheduler.run('jobs')
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
})
