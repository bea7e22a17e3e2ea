// Proves the dashboard's sentence for the salt sources a run or kill left out (contract §15 "Several masters").
import { expect, test } from 'bun:test'
import { skippedSentence } from '../../src/dashboard/lib/fleet'

test('names each skipped source with its reason, and says nothing when none was skipped', () => {
  expect(skippedSentence([])).toBe('')
  expect(skippedSentence(undefined)).toBe('')
  expect(skippedSentence([{ source: 'east', reason: 'salt-api does not answer: connection refused' }, { source: 'west', reason: 'Salt API not configured' }]))
    .toBe('Not sent through salt source east (salt-api does not answer: connection refused), salt source west (Salt API not configured).')
})
