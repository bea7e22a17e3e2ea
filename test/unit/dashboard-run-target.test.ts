// The Run form's target type recognition and confirmation rule (contract §16, issue 26 item 1).
import { describe, expect, test } from 'bun:test'
import { confirmReason, firstIds, recognisedType } from '../../src/dashboard/lib/run-target'

describe('recognisedType', () => {
  test('auto reads G@/L@/E@/I@/S@/N@ targets and and/or/not as compound, commas as a list, the rest as a glob', () => {
    for (const t of ['G@os:Debian', 'L@web-01,web-02', 'E@web-\\d+', 'I@role:db', 'S@10.0.0.0/8', 'N@webs', 'web-* and not G@os:Rocky', '( G@os:Debian or db-01 )', 'not web-01'])
      expect({ t, type: recognisedType(t, 'auto') }).toEqual({ t, type: 'compound' })
    expect(recognisedType('web-01, web-02', 'auto')).toBe('list')
    expect(recognisedType('web-*', 'auto')).toBe('glob')
    expect(recognisedType('nothing-and-more', 'auto')).toBe('glob')
    expect(recognisedType('user@host', 'auto')).toBe('glob')
  })

  test('a type chosen explicitly is kept, whatever the target looks like', () => {
    expect(recognisedType('G@os:Debian', 'glob')).toBe('glob')
    expect(recognisedType('os:Debian', 'grain')).toBe('grain')
  })
})

describe('confirmReason', () => {
  test('asks above 10 minions or for cmd.*, says why; not for 10 minions of test.ping', () => {
    expect(confirmReason(10, 'test.ping')).toBeNull()
    expect(confirmReason(11, 'test.ping')).toBe('it reaches 11 minions')
    expect(confirmReason(1, 'cmd.run')).toBe('cmd.run runs a shell command')
    expect(confirmReason(50, 'cmd.script')).toBe('it reaches 50 minions and cmd.script runs a shell command')
    expect(confirmReason(3, 'state.apply')).toBeNull()
  })

  test('firstIds names five and counts the rest', () => {
    expect(firstIds(['a', 'b'], 2)).toBe('a, b')
    expect(firstIds(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 1203)).toBe('a, b, c, d, e, … and 1198 more')
  })
})
