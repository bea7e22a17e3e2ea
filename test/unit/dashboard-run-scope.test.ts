// Proves the run form's reading of the caller's execute grants (contract §14): what a function may run on, and the notes.
import { expect, test } from 'bun:test'
import { exactFunctions, functionNote, grantText, targetsFor } from '../../src/dashboard/lib/run-scope'

const GRANTS = [
  { resource_glob: 'salt:test.*', target_glob: 'web-*' },
  { resource_glob: 'salt:test.ping', target_glob: 'db-01' },
  { resource_glob: 'salt:state.apply', target_glob: '*' },
]

test('targetsFor: the target globs of every grant that allows the function; any minion wins; none for a function no grant names', () => {
  expect(targetsFor(GRANTS, 'test.ping')).toEqual(['web-*', 'db-01'])
  expect(targetsFor(GRANTS, 'test.version')).toEqual(['web-*'])
  expect(targetsFor([...GRANTS, { resource_glob: '*', target_glob: '*' }], 'test.ping')).toEqual(['*'])
  expect(targetsFor(GRANTS, 'cmd.run')).toEqual([])
})

test('functionNote: refuses a function no grant allows, names the minions of a scoped one, says nothing when it runs anywhere', () => {
  expect(functionNote(GRANTS, 'cmd.run')).toEqual({ allowed: false, text: 'Your roles do not allow cmd.run.' })
  expect(functionNote(GRANTS, ' test.ping ')).toEqual({ allowed: true, text: 'test.ping is allowed on minions matching web-*, db-01; a target that reaches any other minion is refused.' })
  expect(functionNote(GRANTS, 'state.apply')).toBeNull()
  expect(functionNote(GRANTS, '')).toBeNull()
})

test('grantText and exactFunctions: the hint and the suggestions', () => {
  expect(GRANTS.map(grantText)).toEqual(['test.* on web-*', 'test.ping on db-01', 'state.apply on any minion'])
  expect(exactFunctions(GRANTS)).toEqual(['state.apply', 'test.ping'])
})
