// Proves that countRun/runStatus read real Salt 3006 state returns per contract §7, and that the salt-time parsers read Salt's timestamps.
import { describe, expect, test } from 'bun:test'
import { countRun, runStatus, RUN_STATUSES, type RunCounts } from '../../src/salt/returns'
import { jidTime, parseStamp, parseStartTime } from '../../src/lib/salt-time'
import { keyFingerprints, literalGlob } from '../../src/salt/replies'
import { fixture, fixtureText, returnsOf } from '../helpers/fixtures'


/** Counts a state-result dict independently of the code under test. */
function expectedCounts(ret: Record<string, any>): RunCounts {
  const states = Object.values(ret)
  const hasChanges = (c: unknown) => !!c && typeof c === 'object' && Object.keys(c).length > 0
  return {
    total_count: states.length,
    pass_count: states.filter((s) => s.result === true).length,
    fail_count: states.filter((s) => s.result === false).length,
    change_count: states.filter((s) => hasChanges(s.changes)).length,
    duration_ms: Math.round(states.reduce((a, s) => a + s.duration, 0)),
    blocked: false,
  }
}

/** The state-function returns found in the recorded event stream: {jid, minion, fun, ret, stamp}. */
function streamReturns() {
  const out: { jid: string; minion: string; fun: string; ret: unknown; stamp: string }[] = []
  for (const line of fixtureText('events.sse').split('\n')) {
    if (!line.startsWith('data: ')) continue
    const ev = JSON.parse(line.slice(6))
    if (/^salt\/job\/\d+\/ret\//.test(ev.tag) && String(ev.data.fun).startsWith('state.'))
      out.push({ jid: ev.data.jid, minion: ev.data.id, fun: ev.data.fun, ret: ev.data.return, stamp: ev.data._stamp })
  }
  return out
}

describe('countRun on real state.apply returns (local-state.apply)', () => {
  const rets = returnsOf('local-state.apply.json')

  test('the fixture holds the three minions', () => {
    expect(Object.keys(rets).sort()).toEqual(['db-01', 'web-01', 'web-02'])
  })

  test.each(['web-01', 'web-02', 'db-01'])('%s: counts match an independent count of the state dict', (minion) => {
    expect(countRun(rets[minion])).toEqual(expectedCounts(rets[minion] as Record<string, any>))
  })

  // Literal numbers read off the fixture by hand.
  test.each([
    ['web-01', { pass_count: 2, fail_count: 0, change_count: 1, total_count: 2, duration_ms: 76, blocked: false }, 'changed'], // 75.547 + 0.354
    ['web-02', { pass_count: 2, fail_count: 0, change_count: 1, total_count: 2, duration_ms: 109, blocked: false }, 'changed'], // 108.939 + 0.491
    ['db-01', { pass_count: 2, fail_count: 1, change_count: 1, total_count: 3, duration_ms: 97, blocked: false }, 'unhealthy'], // 95.222 + 0.513 + 0.876
  ] as const)('%s: literal counts and status', (minion, counts, status) => {
    const c = countRun(rets[minion])
    expect(c).toEqual(counts)
    expect(runStatus(c)).toBe(status)
  })
})

describe('countRun on error and refusal returns', () => {
  test('render error (local-state.sls-broken): a list of strings is a failed run, never dropped', () => {
    const ret = returnsOf('local-state.sls-broken.json')['web-02'] as string[]
    expect(Array.isArray(ret)).toBe(true)
    const c = countRun(ret)
    expect(c).toEqual({ pass_count: 0, fail_count: ret.length, change_count: 0, total_count: ret.length, duration_ms: 0, blocked: false })
    expect(c.fail_count).toBe(1)
    expect(runStatus(c)).toBe('unhealthy')
  })

  test('refused run (local-state.apply-blocked): "is running as PID" is blocked with all counts 0', () => {
    const ret = returnsOf('local-state.apply-blocked.json')['web-01'] as string[]
    expect(ret[0]).toContain('is running as PID')
    const c = countRun(ret)
    expect(c).toEqual({ pass_count: 0, fail_count: 0, change_count: 0, total_count: 0, duration_ms: 0, blocked: true })
    expect(runStatus(c)).toBe('blocked')
  })

  test('minion down (local-state.apply-one-down): false is blocked with all counts 0', () => {
    const ret = returnsOf('local-state.apply-one-down.json')['db-01']
    expect(ret).toBe(false)
    const c = countRun(ret)
    expect(c).toEqual({ pass_count: 0, fail_count: 0, change_count: 0, total_count: 0, duration_ms: 0, blocked: true })
    expect(runStatus(c)).toBe('blocked')
  })

  const zero = { pass_count: 0, change_count: 0, duration_ms: 0 }
  test.each([
    ['3008 "Minion did not return" string', 'Minion did not return. [Not connected]', { ...zero, fail_count: 0, total_count: 0, blocked: true }],
    ['refusal as a single string', 'The function "state.apply" is running as PID 4242 and was started at 2026, Nov 21 08:00:21.686686 with jid 1', { ...zero, fail_count: 0, total_count: 0, blocked: true }],
    ['single error string', "No matching sls found for 'nope' in env 'base'", { ...zero, fail_count: 1, total_count: 1, blocked: false }],
    ['list of three messages', ['a', 'b', 'c'], { ...zero, fail_count: 3, total_count: 3, blocked: false }],
    ['empty list counts at least one message', [], { ...zero, fail_count: 1, total_count: 1, blocked: false }],
  ] as [string, unknown, RunCounts][])('%s', (_label, ret, counts) => {
    expect(countRun(ret)).toEqual(counts)
  })
})

describe('countRun on test-mode returns (result null counts in total only)', () => {
  // local_async-state.apply started jid 20261121080009975026 with test=true; its returns are in the job cache.
  const jid = fixture('local_async-state.apply.json').response.return[0].jid as string
  const lookup = fixture('runner-jobs.lookup_jid.json')
  const data = lookup.response.return[0].data as Record<string, Record<string, any>>

  test('the job cache lookup is the async test-mode job', () => {
    expect(lookup.request.jid).toBe(jid)
    expect(fixture('local_async-state.apply.json').request.kwarg).toEqual({ test: true })
  })

  test.each(['web-01', 'web-02', 'db-01'])('%s: null results are neither pass nor fail', (minion) => {
    const ret = data[minion]!
    const nulls = Object.values(ret).filter((s) => s.result === null).length
    expect(nulls).toBeGreaterThan(0)
    const c = countRun(ret)
    expect(c).toEqual(expectedCounts(ret))
    expect(c.total_count).toBe(c.pass_count + c.fail_count + nulls)
  })

  test.each([
    ['web-01', { pass_count: 1, fail_count: 0, change_count: 1, total_count: 2, duration_ms: 114, blocked: false }, 'changed'], // 113.5 + 0.608
    ['web-02', { pass_count: 1, fail_count: 0, change_count: 1, total_count: 2, duration_ms: 171, blocked: false }, 'changed'], // 168.925 + 1.585
    ['db-01', { pass_count: 1, fail_count: 1, change_count: 1, total_count: 3, duration_ms: 180, blocked: false }, 'unhealthy'], // 177.047 + 2.022 + 0.715
  ] as const)('%s: literal test-mode counts', (minion, counts, status) => {
    const c = countRun(data[minion])
    expect(c).toEqual(counts)
    expect(runStatus(c)).toBe(status)
  })

  test('every state return on the recorded event stream counts like the independent count', () => {
    const rets = streamReturns()
    for (const r of rets) {
      if (Array.isArray(r.ret)) {
        const refused = r.ret.some((m) => /is running as PID/.test(m))
        expect(countRun(r.ret)).toMatchObject(refused ? { blocked: true, total_count: 0 } : { blocked: false, fail_count: r.ret.length, total_count: r.ret.length })
      } else expect(countRun(r.ret)).toEqual(expectedCounts(r.ret as Record<string, any>))
    }
    // The stream's test-mode returns equal the job cache's.
    for (const r of rets.filter((x) => x.jid === jid)) expect(countRun(r.ret)).toEqual(countRun(data[r.minion]))
  })

  test('status of every state return on the recorded event stream (read off the fixture)', () => {
    const got = Object.fromEntries(streamReturns().map((r) => [`${r.jid} ${r.minion}`, runStatus(countRun(r.ret))]))
    expect(got).toEqual({
      '20261121080007853917 web-01': 'changed', '20261121080007853917 web-02': 'changed', '20261121080007853917 db-01': 'unhealthy', // state.apply
      '20261121080009479916 web-02': 'unhealthy', // broken.sls render error
      '20261121080009975026 web-01': 'changed', '20261121080009975026 web-02': 'changed', '20261121080009975026 db-01': 'unhealthy', // test=true
      '20261121080021686686 web-01': 'changed', // slow.sls (cmd.run sleep 6)
      '20261121080021892197 web-01': 'blocked', '20261121080023108897 web-01': 'blocked', // refused while slow.sls runs
      '20261121080244136113 web-01': 'changed', '20261121080244136113 web-02': 'changed', '20261121080244136113 db-01': 'unhealthy', // final apply
    })
  })
})

describe('countRun details', () => {
  const st = (result: boolean | null, changes: unknown, duration: unknown) => ({ result, changes, duration, __run_num__: 0 })
  test('changes: empty object, empty string and null are no change; a non-empty object or string is', () => {
    const ret = {
      'a_|-1_|-1_|-x': st(true, {}, 1), 'a_|-2_|-2_|-x': st(true, '', 1), 'a_|-3_|-3_|-x': st(true, null, 1),
      'a_|-4_|-4_|-x': st(true, { diff: 'x' }, 1), 'a_|-5_|-5_|-x': st(true, 'changed', 1),
    }
    expect(countRun(ret).change_count).toBe(2)
  })

  test('duration is the rounded sum, numeric strings included, garbage ignored', () => {
    const ret = { 'a_|-1_|-1_|-x': st(true, {}, 0.4), 'a_|-2_|-2_|-x': st(true, {}, '1.3'), 'a_|-3_|-3_|-x': st(true, {}, 'n/a'), 'a_|-4_|-4_|-x': st(true, {}, undefined) }
    expect(countRun(ret).duration_ms).toBe(2)
    expect(countRun({ 'a_|-1_|-1_|-x': st(true, {}, 0.5), 'a_|-2_|-2_|-x': st(true, {}, 0.01) }).duration_ms).toBe(1)
  })
})

describe('runStatus', () => {
  const c = (p: Partial<RunCounts>): RunCounts => ({ pass_count: 0, fail_count: 0, change_count: 0, total_count: 0, duration_ms: 0, blocked: false, ...p })
  test.each([
    ['blocked wins over failures and changes', c({ blocked: true, fail_count: 2, change_count: 3 }), 'blocked'],
    ['any failure is unhealthy, even with changes', c({ fail_count: 1, change_count: 5, pass_count: 5 }), 'unhealthy'],
    ['changes without failures', c({ change_count: 1, pass_count: 3 }), 'changed'],
    ['all passed, nothing changed', c({ pass_count: 3, total_count: 3 }), 'healthy'],
    ['test-mode only nulls, nothing changed', c({ total_count: 2 }), 'healthy'],
  ] as const)('%s', (_label, counts, status) => {
    expect(runStatus(counts)).toBe(status)
  })

  test('RUN_STATUSES are the four values', () => {
    expect([...RUN_STATUSES].sort()).toEqual(['blocked', 'changed', 'healthy', 'unhealthy'])
  })
})

describe('parseStamp', () => {
  const now = Date.parse('2026-11-21T08:00:00.000Z')
  test.each([
    ['3006 naive UTC with microseconds', '2026-11-21T08:00:04.486097', '2026-11-21T08:00:04.486Z'],
    ['3008 +00:00 offset', '2026-11-21T08:00:04.486097+00:00', '2026-11-21T08:00:04.486Z'],
    ['Z suffix, no fraction', '2026-11-21T08:00:04Z', '2026-11-21T08:00:04.000Z'],
    ['other offset is converted to UTC', '2026-11-21T10:00:04.5+02:00', '2026-11-21T08:00:04.500Z'],
    ['one fractional digit', '2026-11-21T08:00:04.4', '2026-11-21T08:00:04.400Z'],
    ['exactly one day ahead is still sane', '2026-11-22T08:00:00', '2026-11-22T08:00:00.000Z'],
  ])('%s', (_label, stamp, want) => {
    expect(new Date(parseStamp(stamp, now)!).toISOString()).toBe(want)
  })

  test.each([
    ['absent', undefined], ['a number', 1795248004486], ['garbage', 'yesterday'], ['date only', '2026-11-21'],
    ['month 13', '2026-13-01T00:00:00'], ['before 2000', '1999-12-31T23:59:59'], ['more than a day ahead', '2026-11-22T08:00:01'],
  ])('%s is null', (_label, stamp) => {
    expect(parseStamp(stamp, now)).toBeNull()
  })

  test('every _stamp on the recorded event stream parses to the session date', () => {
    const stamps = [...fixtureText('events.sse').matchAll(/"_stamp": "([^"]+)"/g)].map((m) => m[1]!)
    expect(stamps.length).toBeGreaterThan(100)
    for (const s of stamps) {
      const t = parseStamp(s, now)
      expect(t).not.toBeNull()
      expect(new Date(t!).toISOString().slice(0, 13)).toBe('2026-11-21T08')
    }
  })
})

describe('parseStartTime and jidTime', () => {
  test('job cache StartTime of every recorded job parses, and agrees with its JID to the millisecond', () => {
    const jobs = fixture('runner-jobs.list_jobs.json').response.return[0] as Record<string, { StartTime: string }>
    expect(Object.keys(jobs).length).toBeGreaterThan(5)
    for (const [jid, job] of Object.entries(jobs)) {
      const t = parseStartTime(job.StartTime)
      expect(t).not.toBeNull()
      expect(t).toBe(jidTime(jid))
    }
  })

  test.each([
    ['2026, Nov 21 08:00:07.853917', '2026-11-21T08:00:07.853Z'],
    ['2026, Jan 01 00:00:00', '2026-01-01T00:00:00.000Z'],
    ['2026, Dec 31 23:59:59.9', '2026-12-31T23:59:59.900Z'],
  ])('parseStartTime(%p)', (s, want) => {
    expect(new Date(parseStartTime(s)!).toISOString()).toBe(want)
  })

  test.each([[undefined], [''], ['2026, Foo 21 08:00:07'], ['2026-11-21T08:00:07'], [20261121]])('parseStartTime(%p) is null', (s) => {
    expect(parseStartTime(s)).toBeNull()
  })

  test.each([
    ['20261121080007853917', '2026-11-21T08:00:07.853Z'],
    ['20261121080021686686_22224', '2026-11-21T08:00:21.686Z'],
  ])('jidTime(%p)', (jid, want) => {
    expect(new Date(jidTime(jid)!).toISOString()).toBe(want)
  })

  test.each([['abc'], ['2026112108'], ['']])('jidTime(%p) is null', (jid) => {
    expect(jidTime(jid)).toBeNull()
  })
})

test('parseStamp refuses a date that does not exist', () => {
  expect(parseStamp('2026-02-30T00:00:00', Date.parse('2026-11-21T00:00:00Z'))).toBeNull()
  expect(parseStamp('2026-02-28T00:00:00', Date.parse('2026-11-21T00:00:00Z'))).toBe(Date.parse('2026-02-28T00:00:00Z'))
})

describe('keyFingerprints (wheel key.finger)', () => {
  test('reads each key directory as its key state, for the ids asked only; the master keys and odd values are left out', () => {
    const reply = {
      minions: { 'web-01': 'aa:bb', other: 'zz:zz', odd: 5 },
      minions_pre: { 'web-03': 'cc:dd', huge: 'x'.repeat(300) },
      minions_rejected: { bad: 'ee:ff' },
      minions_denied: { 'web-01': '11:22' },
      local: { 'master.pem': '33:44' },
    }
    expect(keyFingerprints(reply, ['web-01', 'web-03', 'bad', 'odd', 'huge', 'master.pem'])).toEqual([
      { minionId: 'web-01', act: 'accept', fingerprint: 'aa:bb' },
      { minionId: 'web-03', act: 'pend', fingerprint: 'cc:dd' },
      { minionId: 'bad', act: 'reject', fingerprint: 'ee:ff' },
      { minionId: 'web-01', act: 'denied', fingerprint: '11:22' },
    ])
  })
  test.each([[null], ['error text'], [[]], [{ minions: ['web-01'] }]])('a reply of another shape (%p) gives nothing', (reply) => expect(keyFingerprints(reply, ['web-01'])).toEqual([]))
  test('literalGlob puts *, ? and [ in classes of their own', () => expect(literalGlob("a*b?c[d]e'")).toBe("a[*]b[?]c[[]d]e'"))
})
