// Issue 20 item 12: a minion whose grains nest deeper than SQLite's JSON limit (1,000 levels) broke grain search (500)
// and the fleet's grains tick and inventory refresh. Salt sends such a document as is (grains.items of a custom grain);
// here the fake salt-api does. Now it is that minion's grains only that are cut, with a logged reason.
import { afterEach, expect, spyOn, test } from 'bun:test'
import { call } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { until } from '../helpers/until'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w && (await w.close()))

/** A value nested `depth` levels deep: lists in objects, as a custom grain module can return. */
const nested = (depth: number): unknown => {
  let v: unknown = 'bottom'
  for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v]
  return v
}

test('grains nested 1,500 deep are cut for that minion, logged; grain search and the rest of the fleet work', async () => {
  w = await saltWorld()
  const warn = spyOn(w.deps.log, 'warn')
  const db01 = w.salt.minions.get('db-01')!
  db01.grains = { ...db01.grains, os: 'Debian', osmajorrelease: 12, deep: nested(1500) }
  w.salt.minions.get('web-02')!.grains.role = 'web'
  await w.rt.scheduler.run('keys')
  await w.rt.scheduler.run('presence')
  await w.rt.scheduler.run('grains')
  // The tick stored every minion: web-02 after db-01's document, its top-level grains for db-01.
  expect((await w.get('/api/admin/pollers')).pollers.find((p: { name: string }) => p.name === 'grains')).toMatchObject({ last_error: null })
  expect((await w.get('/api/minions/web-02')).grains.role).toBe('web')
  const d = (await w.get('/api/minions/db-01')).grains
  expect(d.os).toBe('Debian')
  const kept = JSON.stringify(d.deep)
  expect([kept.length < 2000, kept.includes('[nested deeper than 100 levels: not kept]')]).toEqual([true, true])
  expect(warn.mock.calls.filter(([msg]) => msg === 'grains nested too deep: cut')).toEqual([['grains nested too deep: cut', { minion_id: 'db-01', max_depth: 100 }]])
  // Grain search reads every minion's grains, db-01's too.
  const search = await call(w, 'GET', '/api/minions?q=os:debian')
  expect(search.status).toBe(200)
  expect(search.body.minions.map((m: { id: string }) => m.id)).toEqual(['db-01', 'web-01', 'web-02'])
  expect((await call(w, 'GET', '/api/minions?q=G@deep')).body.minions.map((m: { id: string }) => m.id)).toEqual(['db-01'])
  // The inventory refresh goes through the whole fleet (its flush reads each minion's ecosystem from the grains).
  const r = await call(w, 'POST', '/api/inventory/refresh', { body: {} })
  expect(r.status).toBe(202)
  const st = await until(async () => { const s = await w.get('/api/inventory/status'); return s.running ? null : s })
  expect(st.last).toMatchObject({ minions_asked: 3, minions_answered: 3, error: null })
})
