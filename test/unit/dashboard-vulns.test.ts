// Proves the vulnerabilities list's sort choices are the API's (issue 23 item 2), so the select never sends a 422.
import { expect, test } from 'bun:test'
import { SORT_LABEL, VULN_SORTS } from '../../src/dashboard/pages/vulns/types'
import { VULN_SORTS as SERVER_SORTS } from '../../src/features/vulns/service'

test('the sort choices are the API sort values, worst first by default, each with words', () => {
  expect([...VULN_SORTS]).toEqual([...SERVER_SORTS])
  expect(VULN_SORTS[0]).toBe('severity')
  for (const s of VULN_SORTS) expect(SORT_LABEL[s].length).toBeGreaterThan(0)
})
