// Proves the SSE parser on the real /events recording in any chunking, and the normalisation and ingest of contract §6.
import { describe, expect, test } from 'bun:test'
import { SseParser } from '../../src/salt/sse'
import { normalize } from '../../src/salt/normalize'
import { applyFacts } from '../../src/features/ingest/apply'
import { call, testWorld } from '../helpers/app'
import { fixtureText } from '../helpers/fixtures'
import { runFunctions, loadConfig } from '../../src/config'
import { CONFIRM_AFTER_MS, MAX_HELD, dueJids, lookedUp, notePublished, trustStats, trustedReturns } from '../../src/features/jobs/trust'
import { HOLD_MAX_MS, HOLD_MS, SaltFrames } from '../../src/salt/frames'
import { cachedJob, cachedJobs } from '../../src/salt/replies'
import { noFacts } from '../../src/salt/facts'
import { sql } from '../../src/db/sql'

const recording = fixtureText('events.sse')
const RUN_FUNS = runFunctions(loadConfig({}))

describe('SseParser', () => {
  const whole = new SseParser().push(recording)
  test('the recording holds 207 events, each with a tag and JSON data whose tag matches', () => {
    expect(whole.length).toBe(207)
    for (const f of whole) expect(JSON.parse(f.data).tag).toBe(f.tag!)
  })
  test.each([1, 7, 100, 4096])('chunks of %p characters give the same frames', (size) => {
    const p = new SseParser()
    const frames = []
    for (let i = 0; i < recording.length; i += size) frames.push(...p.push(recording.slice(i, i + size)))
    expect(frames).toEqual(whole)
    expect(p.retryMs).toBe(400)
  })
  test('CRLF, multi-line data, comments and id', () => {
    const p = new SseParser()
    expect(p.push(': keepalive\r\nid: 5\r\ntag: a\r\ndata: {"x":\r\ndata: 1}\r')).toEqual([])
    expect(p.push('\n\r\n')).toEqual([{ tag: 'a', data: '{"x":\n1}', id: '5' }])
  })
  test('a blank line with no data yields nothing', () => {
    expect(new SseParser().push('tag: x\n\n\n')).toEqual([])
  })
})

describe('normalize + ingest of the recording', () => {
  test('stores job.new/job.ret once, runs, key changes, starts and presence, with no error', async () => {
    const w = await testWorld()
    const frames = new SseParser().push(recording)
    const now = Date.parse('2026-11-21T09:00:00Z')
    const intents = frames.map((f) => { const d = JSON.parse(f.data); return normalize(d.tag, d.data, now) })
    await applyFacts(w.deps, intents)
    // Applying the same stream twice stores nothing new for jobs.
    const again = await applyFacts(w.deps, intents)
    expect(again.filter((e) => e.category === 'job')).toEqual([])
    const all = (await call(w, 'GET', '/api/activity?limit=500')).body
    const types = all.events.map((e: any) => e.event_type)
    expect(types).toContain('job.new')
    expect(types).toContain('job.ret')
    // salt/auth is a hint: the recording's auth events (pend, accept) made no key events and no minions.
    expect(types.filter((t: string) => t.startsWith('key.'))).toEqual([])
    expect(types).toContain('minion.start')
    expect(types).not.toContain('salt/presence/present')
    // No find_job noise, every job.new has a target and an initiator.
    expect(all.events.filter((e: any) => e.fun === 'saltutil.find_job')).toEqual([])
    for (const e of all.events.filter((x: any) => x.event_type === 'job.new')) expect(e.summary).toMatch(/^\S+( [\w.,-]+)? dispatched to .+ \(\d+ minions?\)$/)
    // job.ret copies initiator and target from its job.
    const ret = all.events.find((e: any) => e.event_type === 'job.ret' && e.fun === 'test.ping')
    expect(ret.initiator).not.toBeNull()
    expect(ret.target).not.toBeNull()
    // State returns became runs with the four statuses' rules.
    const runs = await w.deps.db.rows<{ minion_id: string; status: string }>(sql`SELECT minion_id, status FROM runs`)
    expect(runs.length).toBeGreaterThan(0)
    expect(new Set(runs.map((r) => r.status))).toContain('unhealthy')
    // Each minion start is one event even though salt sends two tags for it.
    const starts = all.events.filter((e: any) => e.event_type === 'minion.start')
    const perMinion = new Map<string, string[]>()
    for (const s of starts) perMinion.set(s.minion_id, [...(perMinion.get(s.minion_id) ?? []), s.ts])
    for (const times of perMinion.values()) for (let i = 1; i < times.length; i++) expect(Math.abs(Date.parse(times[i - 1]!) - Date.parse(times[i]!))).toBeGreaterThanOrEqual(10_000)
  })
  test('a job.ret summary for a state run counts ok, failed and changed', async () => {
    const w = await testWorld()
    notePublished(w.deps, '20261121080000000001', 'state.apply', ['web1'])
    const i = normalize('salt/job/20261121080000000001/ret/web1', {
      id: 'web1', fun: 'state.apply', jid: '20261121080000000001', retcode: 2, success: false, _stamp: '2026-11-21T08:00:01.000000',
      return: { 'a_|-b_|-c_|-d': { result: true, changes: { x: 1 }, duration: 1.4 }, 'e_|-f_|-g_|-h': { result: false, changes: {}, duration: 2.2 } },
    }, Date.parse('2026-11-21T09:00:00Z'))
    expect(i.returns[0]).toMatchObject({ jid: '20261121080000000001', minionId: 'web1', fun: 'state.apply', retcode: 2, success: false, stampMs: Date.parse('2026-11-21T08:00:01Z') })
    const [e] = await applyFacts(w.deps, [i])
    expect(e).toMatchObject({ event_type: 'job.ret', success: false, changed: true, duration_ms: 4, summary: 'web1 returned state.apply: 1 ok, 1 failed, 1 changed', ts: '2026-11-21T08:00:01.000Z' })
    expect((await call(w, 'GET', '/api/minions/web1/runs')).body.total).toBe(1)
  })
  test("a minion schedule's return (no job published) is held; the job cache's copy is stored, as a run and a job whose initiator is schedule", async () => {
    const w = await testWorld()
    const jid = '20261121080000000003'
    const ok = { 'a_|-b_|-c_|-d': { result: true, changes: {}, duration: 1 } }
    const i = normalize(`salt/job/${jid}/ret/web1`, {
      id: 'web1', fun: 'state.apply', fun_args: ['demo'], jid, schedule: 'demo-schedule', pid: 123, retcode: 0, success: true,
      return: { 'a_|-b_|-c_|-d': { result: false, changes: {}, duration: 1 } },
    }, 1_800_000_000_000)
    expect(await applyFacts(w.deps, [i])).toEqual([])
    expect(trustStats(w.deps)).toMatchObject({ held: 1, heldTotal: 1 })
    expect((await call(w, 'GET', `/api/jobs/${jid}`)).status).toBe(404)
    // What runner jobs.list_job answers (salt 3008.3 for web-01's demo-schedule): the cache's copy is what is stored.
    const cached = cachedJob(jid, { Function: 'state.apply', Arguments: ['demo'], Target: 'web1', 'Target-type': 'glob', User: 'root', Minions: ['web1'], Result: { web1: { return: ok, retcode: 0, success: true } } }, 1_800_000_000_000)!
    const events = await applyFacts(w.deps, [{ ...noFacts(), ...cached, jobs: [cached.job] }])
    expect(events.map((e) => [e.event_type, e.initiator])).toEqual([['job.new', 'schedule'], ['job.ret', 'schedule']])
    expect(trustStats(w.deps)).toMatchObject({ held: 0, confirmedTotal: 1 })
    expect((await call(w, 'GET', `/api/jobs/${jid}`)).body).toMatchObject({ jid, fun: 'state.apply', user: 'schedule', target: 'web1' })
    expect((await call(w, 'GET', '/api/minions/web1/runs')).body.runs[0]).toMatchObject({ jid, status: 'healthy' })
  })
  test('the state files a job asked for follow its function in the summaries, so a search for them finds the job', async () => {
    const w = await testWorld()
    const jid = '20261121080000000004'
    await applyFacts(w.deps, [normalize(`salt/job/${jid}/new`, { jid, fun: 'state.apply', arg: ['demo'], tgt: 'web*', user: 'root', minions: ['web1'] }, 1_800_000_000_000)])
    await applyFacts(w.deps, [normalize(`salt/job/${jid}/ret/web1`, { id: 'web1', fun: 'state.apply', fun_args: ['demo'], jid, retcode: 0, return: { 'a_|-b_|-c_|-d': { result: true, changes: {}, __sls__: 'demo' } } }, 1_800_000_000_000)])
    const ev = (await call(w, 'GET', '/api/activity?search=demo')).body.events.map((e: any) => e.summary)
    expect(ev).toEqual(['web1 returned state.apply demo: 1 ok, 0 failed, 0 changed', 'state.apply demo dispatched to web* (1 minion)'])
    expect((await call(w, 'GET', `/api/jobs/${jid}`)).body.sls).toEqual(['demo'])
  })
  test('a non-state return has changed and duration null, and is no run', async () => {
    const w = await testWorld()
    notePublished(w.deps, '20261121080000000002', 'test.ping', ['web1'])
    const i = normalize('salt/job/20261121080000000002/ret/web1', { id: 'web1', fun: 'test.ping', jid: '20261121080000000002', retcode: 0, return: true }, 1_800_000_000_000)
    const [e] = await applyFacts(w.deps, [i])
    expect(e).toMatchObject({ success: true, changed: null, duration_ms: null, summary: 'web1 returned test.ping', ts: new Date(1_800_000_000_000).toISOString() })
    expect((await call(w, 'GET', '/api/minions/web1/runs')).body.total).toBe(0)
  })
  test('hostile minion ids and tags are data, never structure', async () => {
    const w = await testWorld()
    const evil = `<img src=x onerror=alert(1)>'; DROP TABLE minions;--`
    await applyFacts(w.deps, [normalize('salt/key', { act: 'pend', id: evil, _stamp: 'garbage' }, w.clock.now())])
    expect((await call(w, 'GET', '/api/keys')).body.pending).toEqual([evil])
    expect((await call(w, 'GET', '/api/activity')).body.events[0]).toMatchObject({ minion_id: evil, summary: `${evil} key is pending`, ts: new Date(w.clock.now()).toISOString() })
  })
})

describe('SaltFrames: only salt\'s frames, and none a tag wrote (contract §17)', () => {
  const stamp = '2026-11-26T14:02:18.333373+00:00'
  const frame = (tag: string, data: Record<string, unknown>, eol = '\n') => `tag: ${tag}${eol}data: ${JSON.stringify({ data, tag })}${eol}${eol}`
  const key = (id: string) => frame('salt/key', { act: 'pend', id, _stamp: stamp }, '\r\n')
  const ok = frame('salt/auth', { act: 'pend', id: 'web-01', _stamp: stamp })
  test('a frame is handed out once HOLD_MS passed without a carrier', () => {
    const f = new SaltFrames()
    expect(f.push(ok, 0)).toEqual([])
    expect(f.release(HOLD_MS - 1)).toEqual([])
    expect(f.nextReleaseIn(HOLD_MS - 1)).toBe(1)
    expect(f.release(HOLD_MS)).toEqual([{ tag: 'salt/auth', data: { act: 'pend', id: 'web-01', _stamp: stamp } }])
  })
  test('a carrier takes back the frames its tag wrote, in the same chunk or a later one; frames before them stay', () => {
    const carrierTag = `a\r\n\r\n${key('inj-01')}${key('inj-02')}tag: zz`
    const text = ok + frame(carrierTag, { x: 1, _stamp: stamp })
    const whole = new SaltFrames()
    expect(whole.push(text, 0)).toEqual(['injected', 'injected', 'frame'])
    expect(whole.release(HOLD_MS).map((e) => e.tag)).toEqual(['salt/auth'])
    const split = new SaltFrames()
    const cut = text.lastIndexOf('data: {')
    expect(split.push(text.slice(0, cut), 0)).toEqual([])
    expect(split.release(HOLD_MS - 10)).toEqual([])
    expect(split.push(text.slice(cut), HOLD_MS - 5)).toEqual(['injected', 'injected', 'frame'])
    expect(split.release(HOLD_MS * 2).map((e) => e.tag)).toEqual(['salt/auth'])
  })
  test('while the carrier\'s line is still arriving the frames wait (up to HOLD_MAX_MS); a tail of data lines does not hide it', () => {
    const carrierTag = `a\r\n\r\n${key('inj-01')}data: x`
    const text = frame(carrierTag, { big: 'y'.repeat(10_000), _stamp: stamp })
    const f = new SaltFrames()
    const cut = text.lastIndexOf('data: {') + 100
    f.push(text.slice(0, cut), 0)
    expect(f.release(HOLD_MS * 10)).toEqual([])
    expect(f.push(text.slice(cut), HOLD_MS * 10)).toEqual(['injected', 'frame'])
    expect(f.release(HOLD_MAX_MS * 2)).toEqual([])
  })
  test('frames not of salt\'s shape are refused: tag line and JSON tag differ, no tag line, no _stamp, not JSON, two data lines', () => {
    const f = new SaltFrames()
    const bad = [
      `tag: salt/key\ndata: ${JSON.stringify({ tag: 'salt/kez', data: { _stamp: stamp } })}\n\n`,
      `data: ${JSON.stringify({ tag: 'salt/key', data: { _stamp: stamp } })}\n\n`,
      `tag: salt/key\ndata: ${JSON.stringify({ tag: 'salt/key', data: { act: 'pend' } })}\n\n`,
      'tag: salt/key\ndata: {not json\n\n',
      `tag: salt/key\ndata: x\ndata: ${JSON.stringify({ tag: 'salt/key', data: { _stamp: stamp } })}\n\n`,
    ]
    expect(f.push(bad.join(''), 0)).toEqual(['frame', 'frame', 'frame', 'frame', 'frame'])
    expect(f.release(HOLD_MAX_MS)).toEqual([])
  })
  test('a connection that ends with a carrier cut off refuses what it could have taken back', () => {
    const f = new SaltFrames()
    f.push(ok, 0)
    f.push(`tag: a\r\n\r\n${key('inj-01')}tag: zz\ndata: {"data": {"x"`, 1)
    expect(f.end()).toEqual({ events: [], refused: 2 })
  })
})

describe('normalize: a return or publish a minion could have forged is refused or left to be confirmed', () => {
  const now = 1_800_000_000_000
  const jid = '20261126140000000001'
  test('a jid that is not twenty digits refuses the event, whatever it carries', () => {
    const md = '20261126999999999999 @channel ![x](http://e.example/x.png) [Click](http://e.example/)'
    for (const tag of [`salt/job/${md}/ret/web-01`, `salt/job/${md}/new`, 'salt/job/2026112614000000000/ret/web-01', 'salt/job/123456789012345678901/new'])
      expect(normalize(tag, { fun: 'state.apply', id: 'web-01', minions: ['web-01'], return: {} }, now)).toMatchObject({ jobs: [], returns: [], refused: [{ reason: 'jid' }] })
    expect(normalize(`salt/job/${jid}/ret/web-01`, { jid: '20261126140000000002', id: 'web-01', fun: 'test.ping' }, now).refused).toEqual([{ reason: 'jid', tag: `salt/job/${jid}/ret/web-01` }])
  })
  test("a minion's one-piece event (cmd _minion_event) under a publish or key tag, or a return naming another sender, is forged", () => {
    const req = { id: 'web-02', cmd: '_minion_event', tag: 'x', data: {} }
    expect(normalize(`salt/job/${jid}/new`, { ...req, fun: 'state.apply', minions: ['web-01'] }, now)).toMatchObject({ jobs: [], refused: [{ reason: 'forged' }] })
    expect(normalize('salt/key', { ...req, act: 'accept' }, now)).toMatchObject({ keys: [], refused: [{ reason: 'forged' }] })
    expect(normalize(`salt/job/${jid}/ret/web-01`, { ...req, fun: 'state.apply', return: {} }, now)).toMatchObject({ returns: [], refused: [{ reason: 'forged' }] })
    expect(normalize(`salt/job/${jid}/ret/web-01`, { id: 'db-01', fun: 'state.apply', return: {} }, now).refused![0]!.reason).toBe('forged')
    // The master's own publish and return.
    expect(normalize(`salt/job/${jid}/new`, { jid, fun: 'state.apply', minions: ['web-01'] }, now).jobs[0]).toMatchObject({ jid, minions: ['web-01'], published: true })
    expect(normalize(`salt/job/${jid}/ret/web-01`, { cmd: '_return', id: 'web-01', jid, fun: 'state.apply', return: {} }, now).returns).toHaveLength(1)
  })
  test("the job cache's entries under a jid that is not salt's are no jobs (a minion can make the master cache one)", () => {
    const entry = { Function: 'state.apply', Target: 'web-01', User: 'root', StartTime: '2026, Nov 26 14:02:54.375545' }
    expect(cachedJobs({ [jid]: entry, '2026 @here [x](http://e.example/)': entry, req: entry }, now).map((j) => j.jid)).toEqual([jid])
    expect(cachedJob('2026 @here', { ...entry, Result: { 'web-01': { return: {} } } }, now)).toBeNull()
    expect(cachedJob(jid, { ...entry, Result: { 'web-01': { return: {} } } }, now)?.returns.map((r) => r.minionId)).toEqual(['web-01'])
  })
  test('salt/auth and salt/presence/* are hints only; a start is a claim that hints at presence', () => {
    expect(normalize('salt/auth', { act: 'pend', id: 'ghost-99' }, now)).toMatchObject({ keys: [], hints: ['keys'] })
    expect(normalize('salt/presence/change', { new: ['a'], lost: ['b'] }, now)).toMatchObject({ presence: [], hints: ['presence'] })
    const present = normalize('salt/presence/present', { present: ['a'] }, now)
    expect(present.presentList).toBeUndefined()
    expect(present.hints).toEqual(['presence'])
    expect(normalize('salt/minion/web-01/start', { id: 'web-01', cmd: '_minion_event' }, now)).toMatchObject({ starts: [{ minionId: 'web-01' }], hints: ['presence'] })
  })
})

describe('the trust ledger', () => {
  test('returns of a job published to that minion are believed; others are held, at most MAX_HELD, each tried on CONFIRM_AFTER_MS then dropped', async () => {
    const w = await testWorld()
    const r = (jid: string, minionId: string, fun = 'state.apply') => ({ jid, minionId, fun, ret: {}, retcode: 0, success: true, ts: 0, stampMs: null })
    notePublished(w.deps, '20261126140000000001', 'state.apply', ['web-01'])
    expect(trustedReturns(w.deps, [r('20261126140000000001', 'web-01'), r('20261126140000000001', 'db-01'), r('20261126140000000001', 'web-01', 'cmd.run')]).map((x) => x.minionId)).toEqual(['web-01'])
    expect(trustStats(w.deps)).toMatchObject({ held: 2, heldTotal: 2 })
    const t0 = w.clock.now()
    expect(dueJids(w.deps, t0 + CONFIRM_AFTER_MS[0]! - 1, 10)).toEqual([])
    for (const after of CONFIRM_AFTER_MS) {
      expect(dueJids(w.deps, t0 + after, 10)).toEqual(['20261126140000000001'])
      lookedUp(w.deps, '20261126140000000001', t0 + after)
    }
    expect(trustStats(w.deps)).toMatchObject({ held: 0, refused: { unconfirmed: 2 } })
    trustedReturns(w.deps, Array.from({ length: MAX_HELD + 5 }, (_, i) => r(`2026112615${String(i).padStart(10, '0')}`, 'web-01')))
    expect(trustStats(w.deps)).toMatchObject({ held: MAX_HELD, refused: { overflow: 5 } })
  })
})
