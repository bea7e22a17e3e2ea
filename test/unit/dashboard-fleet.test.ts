// Proves the fleet pages' pure logic: hash-query list state, widget query, heartbeat, clipping, key paging, run form parsing, live merge.
import { describe, expect, test } from 'bun:test'
import { flagParam, intParam, oneOf, withChanges } from '../../src/dashboard/lib/query'
import {
  clip, duration, fingerprintOf, headLines, heartbeat, isStateFun, jobArgs, jobFunLabel, noFailingStateText, jobOutcome, outcomeWord, runCountsText, splitChanges, stateResult, trendBars, trendSummary, widenWindow, WIDGET_WINDOWS, pageOfList, parseJsonField, prependLive, runTarget, runTone, widgetActivityQuery,
  MINION_STATUSES, type ActivityEvent, type WidgetConfig,
} from '../../src/dashboard/lib/fleet'
import { MINION_STATUSES as SERVER_MINION_STATUSES } from '../../src/features/minions/service'
import { RUN_STATUSES as SERVER_RUN_STATUSES } from '../../src/salt/returns'
import { RUN_STATUSES } from '../../src/dashboard/lib/fleet'

describe('hash query state', () => {
  const q = new URLSearchParams('q=web&status=online&offset=150&live=0&bad=x')
  test('intParam falls back on absent, malformed or out-of-range values', () => {
    expect(intParam(q, 'offset', 0)).toBe(150)
    expect(intParam(q, 'missing', 7)).toBe(7)
    expect(intParam(q, 'bad', 3)).toBe(3)
    expect(intParam(new URLSearchParams('n=-5'), 'n', 1)).toBe(1)
    expect(intParam(new URLSearchParams('n=1.5'), 'n', 1)).toBe(1)
    expect(intParam(new URLSearchParams('n=900'), 'n', 10, 1, 500)).toBe(10)
  })
  test('oneOf keeps only allowed values', () => {
    expect(oneOf(q, 'status', MINION_STATUSES, '')).toBe('online')
    expect(oneOf(q, 'bad', MINION_STATUSES, '')).toBe('')
    expect(oneOf(new URLSearchParams(), 'sort', ['name', 'x'] as const, 'name')).toBe('name')
  })
  test('flagParam reads 1/0 with a default', () => {
    expect(flagParam(q, 'live', true)).toBe(false)
    expect(flagParam(q, 'absent', true)).toBe(true)
    expect(flagParam(new URLSearchParams('x=1'), 'x')).toBe(true)
  })
  test('withChanges resets the page on a filter change, keeps it on a page change, drops empties', () => {
    expect(withChanges(q, { status: 'offline' })).toEqual({ q: 'web', status: 'offline', live: '0', bad: 'x' })
    expect(withChanges(q, { offset: 200 })).toEqual({ q: 'web', status: 'online', offset: '200', live: '0', bad: 'x' })
    expect(withChanges(q, { offset: 0 })).toEqual({ q: 'web', status: 'online', live: '0', bad: 'x' })
    expect(withChanges(q, { q: '', bad: null, hide: true })).toEqual({ status: 'online', live: '0', hide: '1' })
    expect(withChanges(new URLSearchParams('a=1&run_offset=20'), { run_offset: 40 }, 'run_offset')).toEqual({ a: '1', run_offset: '40' })
  })
})

test('the dashboard status lists match the server', () => {
  expect([...MINION_STATUSES]).toEqual([...SERVER_MINION_STATUSES])
  expect([...RUN_STATUSES].sort()).toEqual([...SERVER_RUN_STATUSES].sort())
  expect(RUN_STATUSES.map(runTone)).toEqual(['ok', 'info', 'bad', 'warn'])
})

describe('overview widget', () => {
  const cfg: WidgetConfig = {
    widget_hide_dispatch: true, widget_hide_routine: false, widget_show_jobs: true, widget_show_keys: true, widget_show_minions: true,
    widget_event_count: 6, widget_heartbeat_minutes: 60,
  }
  test('all categories shown: no category filter; hide flags only when on', () => {
    expect(widgetActivityQuery(cfg)).toEqual({ limit: 6, hide_dispatch: true })
    expect(widgetActivityQuery({ ...cfg, widget_hide_dispatch: false, widget_hide_routine: true, widget_event_count: 50 })).toEqual({ limit: 50, hide_routine: true })
  })
  test('some categories: a comma list; none: nothing to ask', () => {
    expect(widgetActivityQuery({ ...cfg, widget_show_keys: false })).toEqual({ limit: 6, categories: 'job,minion', hide_dispatch: true })
    expect(widgetActivityQuery({ ...cfg, widget_show_jobs: false, widget_show_minions: false })?.categories).toBe('key')
    expect(widgetActivityQuery({ ...cfg, widget_show_jobs: false, widget_show_keys: false, widget_show_minions: false })).toBeNull()
  })
  test('the widget widens its time bound only while it has fewer events than asked', () => {
    expect(WIDGET_WINDOWS.at(-1)).toBeUndefined() // the last step is unbounded, so a quiet fleet still shows its last events
    expect(widenWindow(0, 6, 6)).toBeNull()
    expect(widenWindow(0, 2, 6)).toBe(1)
    expect(widenWindow(1, 0, 6)).toBe(2)
    expect(widenWindow(WIDGET_WINDOWS.length - 1, 0, 6)).toBeNull()
  })
  test('heartbeat: minutes since the last event, stale past the window or without any event', () => {
    const now = Date.parse('2026-11-21T10:00:00.000Z')
    expect(heartbeat('2026-11-21T09:45:30.000Z', 60, now)).toEqual({ minutes: 14, stale: false })
    expect(heartbeat('2026-11-21T09:00:00.000Z', 60, now)).toEqual({ minutes: 60, stale: false })
    expect(heartbeat('2026-11-21T08:59:59.000Z', 60, now)).toEqual({ minutes: 60, stale: true })
    expect(heartbeat(null, 60, now)).toEqual({ minutes: null, stale: true })
    expect(heartbeat('garbage', 60, now)).toEqual({ minutes: null, stale: true })
    expect(heartbeat('2026-11-21T10:05:00.000Z', 5, now)).toEqual({ minutes: 0, stale: false }) // clock skew: never negative
  })
})

test('clip cuts long text and says how much is hidden', () => {
  expect(clip('abc', 5)).toEqual({ text: 'abc', hidden: 0 })
  expect(clip('abcdefgh', 5)).toEqual({ text: 'abcde', hidden: 3 })
})

describe('client-side key paging', () => {
  const ids = Array.from({ length: 250 }, (_, i) => `web-${String(i).padStart(3, '0')}`)
  test('pages and filters case-insensitively', () => {
    expect(pageOfList(ids, '', 0, 100)).toEqual({ total: 250, offset: 0, rows: ids.slice(0, 100) })
    expect(pageOfList(ids, '', 200, 100).rows).toHaveLength(50)
    expect(pageOfList(ids, 'WEB-01', 0, 100)).toEqual({ total: 10, offset: 0, rows: ids.slice(10, 20) })
  })
  test('an offset past the filtered end falls back to the last page', () => {
    expect(pageOfList(ids, 'web-1', 200, 100)).toEqual({ total: 100, offset: 0, rows: ids.slice(100, 200) })
    expect(pageOfList(ids, '', 300, 100).offset).toBe(200)
    expect(pageOfList([], 'x', 100, 100)).toEqual({ total: 0, offset: 0, rows: [] })
  })
})

describe('run form', () => {
  test('JSON fields: empty is absent, wrong shapes are refused with a sentence', () => {
    expect(parseJsonField('  ', 'array', 'Arguments')).toBeUndefined()
    expect(parseJsonField('["a", 1]', 'array', 'Arguments')).toEqual(['a', 1])
    expect(parseJsonField('{"test": true}', 'object', 'Keyword arguments')).toEqual({ test: true })
    expect(() => parseJsonField('{', 'array', 'Arguments')).toThrow('Arguments is not valid JSON.')
    expect(() => parseJsonField('{}', 'array', 'Arguments')).toThrow('must be a JSON array')
    expect(() => parseJsonField('[1]', 'object', 'Keyword arguments')).toThrow('must be a JSON object')
    expect(() => parseJsonField('null', 'object', 'Keyword arguments')).toThrow('must be a JSON object')
  })
  test('a list target becomes ids; other targets stay one string', () => {
    expect(runTarget(' web-01, web-02 ,,', 'list')).toEqual(['web-01', 'web-02'])
    expect(runTarget(' web* ', 'glob')).toBe('web*')
  })
})

test('live events go first, newest first, without duplicates, within the page size', () => {
  const ev = (id: number) => ({ id, summary: `e${id}` }) as ActivityEvent
  const shown = [ev(5), ev(4), ev(3)]
  expect(prependLive(shown, [ev(6), ev(5), ev(7)], 4)).toEqual({ events: [ev(7), ev(6), ev(5), ev(4)], added: 2 })
  expect(prependLive(shown, [ev(4)], 10)).toEqual({ events: shown, added: 0 })
})

test('duration reads as people expect', () => {
  expect(duration(null)).toBe('—')
  expect(duration(850)).toBe('850 ms')
  expect(duration(12_345)).toBe('12.3 s')
  expect(duration(245_000)).toBe('4 min 5 s')
})

test('fingerprintOf reads own keys only: an id named like an Object property has no fingerprint unless the server sent one', () => {
  const lists = { fingerprints: JSON.parse('{"web-01": "aa:bb", "__proto__": "cc:dd"}') as Record<string, string> }
  expect(fingerprintOf(lists, 'web-01')).toBe('aa:bb')
  expect(fingerprintOf(lists, '__proto__')).toBe('cc:dd')
  expect(fingerprintOf(lists, 'constructor')).toBeNull()
  expect(fingerprintOf(lists, 'toString')).toBeNull()
  expect(fingerprintOf(lists, 'web-02')).toBeNull()
})

describe('runs (issue 11)', () => {
  test('a state result reads as a symbol and a word; a dry run\'s undecided state would change', () => {
    expect(stateResult(true, false)).toMatchObject({ symbol: '✔', word: 'succeeded' })
    expect(stateResult(false, true)).toMatchObject({ symbol: '✖', word: 'failed' })
    expect(stateResult(null, true, true)).toMatchObject({ symbol: '—', word: 'would change' })
    expect(stateResult(null, false)).toMatchObject({ symbol: '—', word: 'not run' })
  })
  test('diff outcomes in words', () => {
    const pairs = [[null, { result: true, changed: true }], [{ result: false, changed: false }, { result: true, changed: false }], [{ result: null, changed: true }, null]] as const
    expect(pairs.map(([a, b]) => `${outcomeWord(a)} → ${outcomeWord(b)}`)).toEqual(['absent → changed', 'failed → succeeded', 'would change → absent'])
  })
  test('run counts use "would change" for a dry run', () => {
    const c = { pass_count: 2, fail_count: 0, change_count: 1, total_count: 3 }
    expect(runCountsText({ ...c, test: false })).toBe('2 succeeded, 0 failed, 1 changed, 3 total')
    expect(runCountsText({ ...c, test: true })).toBe('2 succeeded, 0 failed, 1 would change, 3 total')
  })
  test('changes: a diff string apart, the rest as JSON; nothing when empty', () => {
    expect(splitChanges({})).toBeNull()
    expect(splitChanges({ diff: '--- a\n+++ b', mode: '0640' })).toEqual({ diff: '--- a\n+++ b', rest: '{\n  "mode": "0640"\n}' })
    expect(splitChanges({ diff: 'x' })).toEqual({ diff: 'x', rest: null })
    expect(splitChanges({ diff: { old: 1 } })).toEqual({ diff: null, rest: '{\n  "diff": {\n    "old": 1\n  }\n}' })
  })
  test('headLines keeps the first lines and counts the rest', () => {
    expect(headLines('a\nb\nc', 3)).toEqual({ head: 'a\nb\nc', rest: 0 })
    expect(headLines('a\nb\nc\nd', 2)).toEqual({ head: 'a\nb', rest: 2 })
  })
  test('job labels: state files beside state functions, outcome counts as far as known', () => {
    expect(isStateFun('state.apply') && isStateFun('state.highstate') && isStateFun('state.sls')).toBe(true)
    expect(isStateFun('state.running') || isStateFun('test.ping') || isStateFun(null)).toBe(false)
    expect(jobFunLabel({ fun: 'state.apply', sls: ['demo', 'web'] })).toBe('state.apply demo,web')
    expect(jobFunLabel({ fun: 'state.apply' })).toBe('state.apply')
    expect(jobFunLabel({ fun: 'cmd.run', sls: ['x'] })).toBe('cmd.run')
    expect(jobOutcome({ returned: 3, failed: 1, minions: ['a', 'b', 'c', 'd'] })).toBe('3 returned, 1 failed, 1 not returned')
    expect(jobOutcome({ returned: 3, minions: null })).toBe('3 returned')
  })
  test('the trend: a summary of the newest point, stacked bars within the box', () => {
    const p = (day: string, healthy: number, unhealthy: number) => ({ day, healthy, changed: 0, unhealthy, blocked: 0, never: 1 })
    const t = { days: 2, points: [p('2026-11-22', 1, 0), p('2026-11-23', 2, 1)] }
    expect(trendSummary(t)).toBe('Minions by last run over 2 days (2026-11-22 to 2026-11-23); on 2026-11-23: 2 healthy, 0 changed, 1 unhealthy, 0 blocked, 1 never run.')
    expect(trendSummary({ days: 30, points: [] })).toBe('No run history yet.')
    const bars = trendBars(t, 100, 40)
    expect(bars.map((b) => [b.day, b.status, b.h])).toEqual([
      ['2026-11-22', 'healthy', 10], ['2026-11-22', 'never', 10], ['2026-11-23', 'healthy', 20], ['2026-11-23', 'unhealthy', 10], ['2026-11-23', 'never', 10],
    ])
    expect(bars.every((b) => b.y >= 0 && b.y + b.h <= 40 + 1e-9 && b.x + b.w <= 100)).toBe(true)
  })
})

test("jobArgs: the job page's positional arguments and name=value keyword lines, none as null; an older server's raw arg as positional", () => {
  expect(jobArgs({ arg: ['mystate', { __kwarg__: true, test: true }], arguments: ['mystate'], kwargs: { test: true, pillar: { a: 1 } } }))
    .toEqual({ positional: ['mystate'], keyword: ['test=true', 'pillar={"a":1}'] })
  expect(jobArgs({ arg: [], arguments: [], kwargs: {} })).toEqual({ positional: null, keyword: null })
  expect(jobArgs({ arg: null, arguments: null, kwargs: null })).toEqual({ positional: null, keyword: null })
  expect(jobArgs({ arg: ['x'] })).toEqual({ positional: ['x'], keyword: null })
})

test('noFailingStateText: with no failing state, minions counted in Runs failing (render errors) are explained, not left to disagree', () => {
  expect(noFailingStateText(0)).toBe('No state is failing.')
  expect(noFailingStateText(undefined)).toBe('No state is failing.')
  expect(noFailingStateText(1)).toBe('No state is failing, but 1 minion whose last run failed before any state ran (a render or compile error) counts in Runs failing.')
  expect(noFailingStateText(3)).toBe('No state is failing, but 3 minions whose last run failed before any state ran (a render or compile error) count in Runs failing.')
})
