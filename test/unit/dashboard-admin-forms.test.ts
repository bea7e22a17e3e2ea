/** Pure logic of the dashboard's admin forms: input reading, partial-update bodies, 422 grouping, field table. */
import { describe, expect, test } from 'bun:test'
import { changedFields, errorsByField, readInt, saltChanges } from '../../src/dashboard/lib/form-values'
import { intHint, POLLER_FORM, WIDGET_FORM, type FieldSpec } from '../../src/dashboard/lib/settings-fields'
import { elapsed, interval, until } from '../../src/dashboard/lib/duration'
import { POLLER_FIELDS, WIDGET_FIELDS } from '../../src/features/settings/schema'

describe('readInt', () => {
  test.each([
    ['30', 30], [' 0 ', 0], ['-5', -5], ['86400', 86400],
    ['', ''], ['1.5', '1.5'], ['abc', 'abc'], ['1e3', '1e3'],
  ] as const)('%p → %p', (raw, want) => expect(readInt(raw)).toBe(want))
})

describe('changedFields', () => {
  test('keeps only what differs', () => {
    expect(changedFields({ a: 1, b: true, c: 3 }, { a: 1, b: false, c: 4 })).toEqual({ b: false, c: 4 })
  })
  test('nothing changed is an empty body', () => {
    expect(changedFields({ a: 1 }, { a: 1 })).toEqual({})
  })
  test('a number typed as the same value is unchanged', () => {
    expect(changedFields({ a: 300 }, { a: readInt('300') })).toEqual({})
  })
})

describe('saltChanges', () => {
  const saved = { url: 'https://salt:8000', username: 'saltdeck', verify: true, eauth: 'pam', presence_method: 'present' }
  const form = { url: 'https://salt:8000', username: 'saltdeck', password: '', verify: true, eauth: 'pam', presence_method: 'present' }
  test('empty password and no edits: nothing to send', () => expect(saltChanges(saved, form)).toEqual({}))
  test('a typed password is sent, unchanged fields are not', () => {
    expect(saltChanges(saved, { ...form, password: 'pw' })).toEqual({ password: 'pw' })
  })
  test('changed fields are sent', () => {
    expect(saltChanges(saved, { ...form, url: 'http://other', verify: false, eauth: 'auto', presence_method: 'status' })).toEqual({ url: 'http://other', verify: false, eauth: 'auto', presence_method: 'status' })
  })
  test('null stored values compare as empty text', () => {
    const none = { url: null, username: null, verify: true, eauth: 'pam', presence_method: 'present' }
    expect(saltChanges(none, { ...form, url: '', username: '' })).toEqual({})
    expect(saltChanges(none, { ...form, url: 'http://x', username: '' })).toEqual({ url: 'http://x' })
  })
})

describe('errorsByField', () => {
  test('groups entries by the field after the location kind', () => {
    const detail = [
      { type: 'less_than_equal', loc: ['body', 'widget_event_count'], msg: 'Input should be less than or equal to 50' },
      { type: 'int_parsing', loc: ['body', 'widget_event_count'], msg: 'not an integer' },
      { type: 'value_error', loc: ['body'], msg: 'Value error, at least one salt field must be provided' },
    ]
    expect(errorsByField(detail)).toEqual({
      widget_event_count: ['Input should be less than or equal to 50', 'not an integer'],
      '': ['Value error, at least one salt field must be provided'],
    })
  })
  test('a string detail has no field errors', () => expect(errorsByField('Forbidden')).toEqual({}))
})

describe('settings field table matches the server schema', () => {
  const check = (form: Record<string, FieldSpec>, server: Record<string, readonly [{ minimum?: number; maximum?: number; type?: string }, unknown]>) => {
    expect(Object.keys(form).sort()).toEqual(Object.keys(server).sort())
    for (const [k, f] of Object.entries(form)) {
      const [schema] = server[k]!
      if (f.kind === 'int') expect([k, f.min, f.max]).toEqual([k, schema.minimum!, schema.maximum!])
      else expect([k, schema.type]).toEqual([k, 'boolean'])
    }
  }
  test('pollers', () => check(POLLER_FORM, POLLER_FIELDS))
  test('widget', () => check(WIDGET_FORM, WIDGET_FIELDS))
  test('hint', () => expect(intHint(POLLER_FORM.minion_state_keys_interval_seconds)).toBe('0 to 86400; 0 = off.'))
})

describe('durations', () => {
  test.each([[0, 'off'], [45, '45 s'], [60, '1 min'], [90, '90 s'], [300, '5 min'], [3600, '1 h'], [86400, '1 d'], [null, '—']] as const)(
    'interval(%p) = %p', (s, want) => expect(interval(s)).toBe(want))
  test.each([[850, '850 ms'], [1234, '1.2 s'], [12_345, '12 s'], [185_000, '3 min 5 s'], [null, '—']] as const)(
    'elapsed(%p) = %p', (ms, want) => expect(elapsed(ms)).toBe(want))
})

describe('until', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z')
  test.each([
    ['2026-11-21T10:00:45.000Z', 'in 45 s'], ['2026-11-21T10:05:00.000Z', 'in 5 min'], ['2026-11-21T13:00:00.000Z', 'in 3 h'],
    ['2026-11-25T10:00:00.000Z', 'in 4 days'], ['2026-11-21T09:59:00.000Z', 'due'], [null, '—'],
  ] as const)('%p → %p', (ts, want) => expect(until(ts, now)).toBe(want))
})
