// Proves the minion list's q (README "Minion search"): a plain word is an id substring, a glob is salt's glob on the whole
// id, `name:glob` and `G@name:glob` match a top-level grain the way salt's grain matcher does; hostile text is only data.
import { beforeAll, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { applyFacts } from '../../src/features/ingest/apply'
import { recordGrains } from '../../src/features/minions/service'
import { noFacts } from '../../src/salt/facts'

let w: Awaited<ReturnType<typeof testWorld>>
const IDS = ['web-01', 'web-02', 'Web-03', 'db-01', "o'neil", '50%_off', 'a[1]', 'a1', 'x*y', 'no-grains']
beforeAll(async () => {
  w = await testWorld()
  await applyFacts(w.deps, [{ ...noFacts(), keys: IDS.map((minionId) => ({ minionId, act: minionId === 'db-01' ? 'pend' : 'accept', ts: w.clock.now() })) }])
  const g = (os: string, extra: Record<string, unknown> = {}) => ({ os, os_family: os === 'Rocky' ? 'RedHat' : 'Debian', osrelease: '12', ...extra })
  await recordGrains(w.deps, [
    { id: 'web-01', grains: g('Debian', { role: 'web', roles: ['web', 'edge'], virtual: true, num_cpus: 4 }) },
    { id: 'web-02', grains: g('Debian', { role: 'web', roles: ['web'], virtual: false, num_cpus: 8 }) },
    { id: 'Web-03', grains: g('Ubuntu', { role: 'web-canary', nested: { role: 'db' } }) },
    { id: 'db-01', grains: g('Rocky', { role: 'db', roles: ['db'], manufacturer: null }) },
    { id: "o'neil", grains: g("O'Debian%", { role: "it's" }) },
    { id: '50%_off', grains: g('Debian') },
    { id: 'a[1]', grains: g('Debian') },
    { id: 'a1', grains: g('Debian') },
    { id: 'x*y', grains: g('Debian') },
  ])
})

const ids = async (q: string, extra = '') => {
  const r = await call(w, 'GET', `/api/minions?q=${encodeURIComponent(q)}${extra}`, { who: 'viewer' })
  expect(r.status).toBe(200)
  expect(r.body.total).toBe(r.body.minions.length)
  return r.body.minions.map((m: { id: string }) => m.id)
}

test.each([
  // Plain text: a case-insensitive id substring, as before; %, _ and quotes are literal.
  ['web', ['Web-03', 'web-01', 'web-02']],
  ['%', ['50%_off']],
  ['_', ['50%_off']],
  ["'", ["o'neil"]],
  ['nothing', []],
  // A glob: the whole id, case-sensitive like salt's fnmatch.
  ['web*', ['web-01', 'web-02']],
  ['Web*', ['Web-03']],
  ['*-0?', ['Web-03', 'db-01', 'web-01', 'web-02']],
  ['web-0[2-9]', ['web-02']],
  ['web-0[!1]', ['web-02']],
  ['eb-0*', []],
  ['a[[]1]', ['a[1]']],
  ['a[1]', ['a1']],
  ['x[*]y', ['x*y']],
  ['*%*', ['50%_off']],
  ["o'*", ["o'neil"]],
  ['[', []],
  ['[z-a]*', []],
  // A grain: name:glob or G@name:glob, both sides folded to lower case, a list grain by any element.
  ['os:Debian', ['50%_off', 'a1', 'a[1]', 'web-01', 'web-02', 'x*y']],
  ['G@os:debian', ['50%_off', 'a1', 'a[1]', 'web-01', 'web-02', 'x*y']],
  ['os:Deb*', ['50%_off', 'a1', 'a[1]', 'web-01', 'web-02', 'x*y']],
  ['G@os:*u*', ['Web-03']],
  ['os_family:RedHat', ['db-01']],
  ['role:web', ['web-01', 'web-02']],
  ['role:web*', ['Web-03', 'web-01', 'web-02']],
  ['roles:edge', ['web-01']],
  ['roles:db', ['db-01']],
  ['virtual:True', ['web-01']],
  ['virtual:false', ['web-02']],
  ['num_cpus:8', ['web-02']],
  ['manufacturer:None', ['db-01']],
  ['nested:*', []],
  ['G@role', ['Web-03', 'db-01', "o'neil", 'web-01', 'web-02']],
  ["os:o'debian%", ["o'neil"]],
  ["role:it's", ["o'neil"]],
  ['role:%', []],
  ['missing:*', []],
  ['G@', []],
  // Not a grain name before the colon: a glob or a substring of the id.
  ['*:*', []],
  ['1:2', []],
])('q=%p', async (q, want) => expect(await ids(q as string)).toEqual(want as string[]))

test('q combines with status and paging; total counts every match', async () => {
  expect(await ids('role:*', '&status=pending')).toEqual(['db-01'])
  const r = (await call(w, 'GET', `/api/minions?q=${encodeURIComponent('os:debian')}&limit=2&offset=1`)).body
  expect(r.total).toBe(6)
  expect(r.minions.map((m: { id: string }) => m.id)).toEqual(['a1', 'a[1]'])
})

test.each(["'; DROP TABLE minions; --", '"', '\\', '[[[[', ']]]]', '*'.repeat(255), '[!' + ']'.repeat(200), 'G@' + 'a'.repeat(253), 'a:' + '['.repeat(253), '\u0000', 'G@os:\u0000*', '%00', '\u{1F600}*'])(
  'hostile q %p is only data: 200, and the table is still there',
  async (q) => {
    const r = await call(w, 'GET', `/api/minions?q=${encodeURIComponent(q)}`)
    expect(r.status).toBe(200)
    expect((await call(w, 'GET', '/api/minions')).body.total).toBe(IDS.length)
  },
)

test('q over 255 characters is a 422', async () => {
  expect((await call(w, 'GET', `/api/minions?q=${'a'.repeat(256)}`)).status).toBe(422)
})

test('a minion first seen through a source before its row existed is listed with that source', async () => {
  // The sighting finds no minion row to write its names to; the row is made later (a key list, a presence answer).
  const w = await testWorld()
  const { noteSeenThrough } = await import('../../src/features/minions/sources-store')
  const { insertMinion } = await import('../../src/features/minions/store')
  await w.deps.db.tx((tx) => noteSeenThrough(tx, ['late-01'], 'east', 1000))
  await insertMinion(w.deps.db, 'late-01', 2000)
  const r = await call(w, 'GET', '/api/minions?q=late-01')
  expect(r.body.minions.map((m: { id: string; sources: string[] }) => [m.id, m.sources])).toEqual([['late-01', ['east']]])
  expect((await call(w, 'GET', '/api/minions/late-01')).body.sources).toEqual(['east'])
})
