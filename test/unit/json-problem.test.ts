// Proves findJsonProblem words a malformed body's error and position as Python's json module does, and passes valid JSON.
import { expect, test } from 'bun:test'
import { findJsonProblem } from '../../src/http/json'

test.each([
  ['{"a": [1, 2}', 11, "Expecting ',' delimiter"],
  ['"\\x"', 1, 'Invalid \\escape'],
  ['"a\nb"', 2, 'Invalid control character at'],
  ['  ', 2, 'Expecting value'],
  ['{"a": 1,}', 8, 'Expecting property name enclosed in double quotes'],
  ['-', 0, 'Expecting value'],
])('findJsonProblem(%p) is at %p: %s', (text, pos, error) => {
  expect(findJsonProblem(text)).toEqual({ pos, error })
})

test.each(['{}', '[1, {"a": null}]', '"\\u00e9"', '-0.5e+3', ' true '])('findJsonProblem(%p) is null for valid JSON', (text) => {
  expect(findJsonProblem(text)).toBeNull()
})
