// Proves the dashboard's words for operators (issue 23 item 5): the salt settings missing in plain words, no red badge
// for an empty key list, and a Saltdeck that does not answer said in words, not the browser's "Failed to fetch".
import { expect, test } from 'bun:test'
import { missingSaltWords } from '../../src/dashboard/lib/settings-fields'
import { keyCountTone } from '../../src/dashboard/lib/fleet'
import { api, ApiError, UNREACHABLE } from '../../src/dashboard/lib/api'

test('the missing salt settings are named as the form names them, not by their keys', () => {
  expect(missingSaltWords(['salt.url', 'salt.username', 'salt.password'])).toBe('Enter the salt-api URL, the username and the password below.')
  expect(missingSaltWords(['salt.password'])).toBe('Enter the password below.')
  expect(missingSaltWords(['salt.url', 'salt.password'])).not.toContain('salt.')
})

test('an empty key list has a muted count; a list with keys keeps its state tone', () => {
  expect(keyCountTone('rejected', 0)).toBe('muted')
  expect(keyCountTone('pending', 0)).toBe('muted')
  expect(keyCountTone('rejected', 2)).toBe('bad')
  expect(keyCountTone('pending', 1)).toBe('warn')
})

test('a server that does not answer is an ApiError saying so in words', async () => {
  const s = Bun.serve({ port: 0, fetch: () => new Response('{}') })
  const url = `http://127.0.0.1:${s.port}/api/auth/me`
  s.stop(true)
  const e = (await api('GET', url).catch((x: unknown) => x)) as ApiError
  expect(e).toBeInstanceOf(ApiError)
  expect(e).toMatchObject({ status: 0, message: UNREACHABLE })
  expect(e.message).not.toContain('fetch')
  expect(e.message).toContain('Saltdeck is not answering')
})
