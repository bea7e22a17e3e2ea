// Proves record severity: CVSS v3.0/v3.1 base scores by the specification's formulas, CVSS v4.0 base scores against
// FIRST's reference calculator (test/fixtures/cvss4-base-scores.json: 120 random base vectors with the scores FIRST's
// cvss-v4-calculator gives them), the bands, and which source of severity a record's wins.
import { describe, expect, test } from 'bun:test'
import { cvssScore, recordSeverity, severityBand } from '../../src/features/vulns/cvss'
import vectors4 from '../fixtures/cvss4-base-scores.json'

describe('CVSS v3', () => {
  test.each([
    // NVD's scores for these vectors (v3.1 calculator).
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1],
    ['CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.8],
    ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N', 5.9],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', 7.5],
    ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 8.8],
    ['CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 1.6],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0],
    ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
    ['CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1],
    ['CVSS:3.0/AV:L/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N', 4],
  ])('%s = %p', (vector, score) => expect(cvssScore(vector)?.score).toBe(score))

  test('malformed vectors score nothing', () => {
    for (const v of ['CVSS:3.1/AV:N/AC:L', 'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:N/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:2.0/AV:N', 'garbage', ''])
      expect(cvssScore(v)).toBeNull()
  })
})

describe('CVSS v4.0', () => {
  test('the specification\'s example vectors', () => {
    expect(cvssScore('CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N')).toEqual({ version: '4.0', score: 9.3 })
    expect(cvssScore('CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:N/SC:N/SI:N/SA:N')?.score).toBe(0)
    expect(cvssScore('CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H')?.score).toBe(10)
    // A score on a rounding halfway point: FIRST's current calculator gives 5.7 (5.65 is not rounded down by float error).
    expect(cvssScore('CVSS:4.0/AV:N/AC:L/AT:P/PR:H/UI:A/VC:N/VI:H/VA:L/SC:N/SI:N/SA:L')?.score).toBe(5.7)
    // Threat and supplemental metrics do not change the base score (CVSS-B).
    expect(cvssScore('CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/E:U/S:P/AU:Y')?.score).toBe(9.3)
  })

  test(`${vectors4.length} random base vectors score as FIRST's reference calculator scores them`, () => {
    const wrong = (vectors4 as [string, number][]).filter(([v, s]) => cvssScore(v)?.score !== s).map(([v, s]) => `${v}: ours ${cvssScore(v)?.score}, FIRST ${s}`)
    expect(wrong).toEqual([])
    expect(new Set((vectors4 as [string, number][]).map(([, s]) => severityBand(s))).size).toBeGreaterThanOrEqual(4)
  })

  test('malformed v4 vectors score nothing', () => {
    for (const v of ['CVSS:4.0/AV:N/AC:L', 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:Q', 'CVSS:4.0/AV:N/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N'])
      expect(cvssScore(v)).toBeNull()
  })
})

describe('record severity', () => {
  test('bands as CVSS does', () => {
    expect([0, 0.1, 3.9, 4, 6.9, 7, 8.9, 9, 10].map(severityBand)).toEqual(['none', 'low', 'low', 'medium', 'medium', 'high', 'high', 'critical', 'critical'])
  })

  test('the label wins, else the highest computed score, else unknown; hostile shapes are unknown', () => {
    const v3 = { type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H' } // 7.5
    const v4 = { type: 'CVSS_V4', score: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N' } // 9.3
    expect(recordSeverity({ database_specific: { severity: 'Moderate' }, severity: [v4] })).toEqual({ severity: 'medium', score: 9.3 })
    expect(recordSeverity({ severity: [v3] })).toEqual({ severity: 'high', score: 7.5 })
    expect(recordSeverity({ severity: [v3, v4] })).toEqual({ severity: 'critical', score: 9.3 })
    expect(recordSeverity({ affected: [{ severity: [v3] }] })).toEqual({ severity: 'high', score: 7.5 })
    // A label is not trusted as a score: "severe" is no known label, and a vector's own label means nothing.
    expect(recordSeverity({ database_specific: { severity: 'severe' }, severity: [{ type: 'CVSS_V3', score: 'HIGH' }] })).toEqual({ severity: 'unknown', score: null })
    for (const r of [null, 5, 'x', { severity: 'x' }, { severity: [null, 5, { type: 'CVSS_V3', score: 7 }] }, { database_specific: 'high' }])
      expect(recordSeverity(r).severity).toBe('unknown')
  })
})
