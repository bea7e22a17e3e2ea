// The cluster module without PostgreSQL (contract §15): the bus on an in-process hub, leadership over any lock, the
// one SQLite instance listed by GET /api/cluster, and a settings change reaching another service on the same hub.
import { afterEach, describe, expect, test } from 'bun:test'
import { Bus, LocalHub } from '../../src/cluster/bus'
import { Leadership, type HeldLock, type TryLock } from '../../src/cluster/leadership'
import { ClusterNode } from '../../src/cluster/node'
import { clusterEngine } from '../../src/cluster/engine'
import { loadSettings, readSection, resyncSettings } from '../../src/features/settings/service'
import { call, testWorld } from '../helpers/app'
import { until } from '../helpers/until'
import type { AppDeps } from '../../src/deps'

const quiet = { info() {}, warn() {} }
const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s()
})

describe('bus', () => {
  test("a message reaches every other bus on the hub, never the sender's own; counted both ways", async () => {
    const hub = new LocalHub()
    const [x, y, z] = ['x', 'y', 'z'].map((id) => new Bus(id, hub.transport()))
    for (const b of [x, y, z]) await b!.start()
    const got: string[] = []
    for (const [name, b] of [['x', x], ['y', y], ['z', z]] as const) b!.subscribe('settings', (d) => got.push(`${name}:${d}`))
    x!.publish('settings', 'pollers')
    await until(() => got.length === 2, 'delivered')
    await Bun.sleep(5)
    expect(got.sort()).toEqual(['y:pollers', 'z:pollers'])
    expect([x!.stats.sent, y!.stats.received, x!.stats.received]).toEqual([1, 1, 0])
  })

  test('a handler that throws is reported and the others still hear the message', async () => {
    const hub = new LocalHub()
    const errors: unknown[] = []
    const x = new Bus('x', hub.transport())
    const y = new Bus('y', hub.transport(), (e) => errors.push(e))
    await x.start()
    await y.start()
    const got: string[] = []
    y.subscribe('auth', () => { throw new Error('boom') })
    y.subscribe('auth', () => got.push('second'))
    x.publish('auth')
    await until(() => got.length === 1, 'the second handler')
    expect(errors).toHaveLength(1)
  })
})

/** Locks held in memory, one holder per name; `cut` makes a holder's lock read as gone (its connection died). */
function memoryLocks() {
  const holders = new Map<string, symbol>()
  const tryLockFor = (): TryLock & { cut(name: string): void } => {
    const me = Symbol('instance')
    const f = (async (name: string): Promise<HeldLock | null> => {
      if (holders.has(name)) return null
      holders.set(name, me)
      return { alive: async () => holders.get(name) === me, release: async () => void (holders.get(name) === me && holders.delete(name)) }
    }) as TryLock & { cut(name: string): void }
    f.cut = (name) => void (holders.get(name) === me && holders.delete(name))
    return f
  }
  return { tryLockFor }
}

describe('leadership', () => {
  test('one holder per name; a lost lock stops the work at once and another instance takes it at its next try', async () => {
    const locks = memoryLocks()
    const log: string[] = []
    const lockA = locks.tryLockFor()
    const a = new Leadership(lockA, quiet, 10_000)
    const b = new Leadership(locks.tryLockFor(), quiet, 10_000)
    for (const [name, l] of [['a', a], ['b', b]] as const) l.compete('default', { gained: () => void log.push(`${name} leads`), lost: () => void log.push(`${name} stops`) })
    await a.start()
    await b.start()
    expect([a.leads(), b.leads()]).toEqual([['default'], []])
    lockA.cut('default')
    // B tries first: the lock is free, B takes it; A's check then finds its lock gone and stops its work.
    await b.tick()
    await a.tick()
    expect([a.leads(), b.leads()]).toEqual([[], ['default']])
    expect(log).toEqual(['a leads', 'b leads', 'a stops'])
    await a.stop()
    await b.stop()
    expect(log.at(-1)).toBe('b stops')
  })

  test('stop gives the lock back so another instance leads at its next try', async () => {
    const locks = memoryLocks()
    const a = new Leadership(locks.tryLockFor(), quiet, 10_000)
    const b = new Leadership(locks.tryLockFor(), quiet, 10_000)
    a.compete('(fleet)', { gained() {}, lost() {} })
    b.compete('(fleet)', { gained() {}, lost() {} })
    await a.start()
    await b.start()
    expect(b.leads()).toEqual([])
    await a.stop()
    await b.tick()
    expect(b.leads()).toEqual(['(fleet)'])
    await b.stop()
  })
})

describe('the instance on an in-process bus (SQLite, or a database without a URL for locks)', () => {
  async function node(deps: AppDeps, hub: LocalHub) {
    const n = new ClusterNode(deps, clusterEngine(deps.db, hub), { heartbeatMs: 60_000, leadershipTickMs: 60_000 })
    n.compete('default', { gained() {}, lost() {} })
    n.compete('(fleet)', { gained() {}, lost() {} })
    await n.start()
    await n.lead()
    stops.push(() => n.stop())
    return n
  }

  test('GET /api/cluster lists the one instance, leading the source and fleet-wide work; view setting:* only', async () => {
    const w = await testWorld()
    const n = await node(w.deps, new LocalHub())
    const r = await call(w, 'GET', '/api/cluster')
    expect(r.status).toBe(200)
    expect(r.body.instances).toHaveLength(1)
    expect(r.body.instances[0]).toMatchObject({ id: n.me.id, engine: w.deps.db.engine, leads: ['(fleet)', 'default'] })
    expect((await call(w, 'GET', '/api/cluster', { who: 'nobody' })).status).toBe(403)
    expect((await call(w, 'GET', '/api/cluster', { who: 'anon' })).status).toBe(401)
    // Not seen for a minute: no longer listed.
    w.clock.advance(61_000)
    expect((await call(w, 'GET', '/api/cluster')).body.instances).toEqual([])
  })

  test('a settings change through one service is read by another on the same bus', async () => {
    const w = await testWorld()
    const hub = new LocalHub()
    await node(w.deps, hub)
    // A second service on the same database: its own settings in memory, its own end of the bus.
    const other = { ...w.deps, bus: undefined } as AppDeps
    await loadSettings(other)
    const changed: string[] = []
    other.onSettingsChanged = (s) => void changed.push(s)
    await node(other, hub)
    expect((await call(w, 'PUT', '/api/admin/settings/widget', { body: { widget_event_count: 11 } })).status).toBe(200)
    await until(() => readSection(other, 'widget').widget_event_count === 11, 'the other service reloaded')
    expect(changed).toEqual(['widget'])
  })

  test('after the bus reconnected, the settings are re-read and only the sections that changed meanwhile are applied', async () => {
    const w = await testWorld()
    const other = { ...w.deps, bus: undefined } as AppDeps
    await loadSettings(other)
    const changed: string[] = []
    other.onSettingsChanged = (s) => void changed.push(s)
    // Changed through the first service while the other heard nothing (no bus between them).
    expect((await call(w, 'PUT', '/api/admin/settings/pollers', { body: { jobs_poll_interval_seconds: 42 } })).status).toBe(200)
    expect(readSection(other, 'pollers').jobs_poll_interval_seconds).toBe(300)
    expect(await resyncSettings(other)).toEqual(['pollers'])
    expect(changed).toEqual(['pollers'])
    expect(readSection(other, 'pollers').jobs_poll_interval_seconds).toBe(42)
    expect(await resyncSettings(other)).toEqual([])
  })
})
