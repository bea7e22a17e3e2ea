// Proves the one CSV writer (src/http/csv.ts): RFC 4180 quoting, formula-leading text neutralised (OWASP CSV
// injection), the Accept/format choice, and a stream that reads a page only when its reader wants more.
import { expect, test } from 'bun:test'
import { CSV_PAGE, csvCell, csvLine, csvStream, wantsCsv } from '../../src/http/csv'

test('cells: plain text as is, RFC 4180 quoting for comma, quote, CR and LF, nulls empty', () => {
  expect(csvCell('web-01')).toBe('web-01')
  expect(csvCell('a,b')).toBe('"a,b"')
  expect(csvCell('say "hi"')).toBe('"say ""hi"""')
  expect(csvCell('a\nb')).toBe('"a\nb"')
  expect(csvCell('a\rb')).toBe('"a\rb"')
  expect(csvCell(null)).toBe('')
  expect(csvCell(undefined)).toBe('')
  expect(csvCell(['x', 'y'])).toBe('x y')
  expect(csvCell({ shell: '/bin/sh' })).toBe('"{""shell"":""/bin/sh""}"')
  expect(csvLine(['a', 1, true, null])).toBe('a,1,true,\r\n')
})

test('text starting with = + - @ tab or CR gets a leading quote and is quoted; numbers and booleans do not', () => {
  expect(csvCell('=1+1')).toBe(`"'=1+1"`)
  expect(csvCell('+1')).toBe(`"'+1"`)
  expect(csvCell('-2')).toBe(`"'-2"`)
  expect(csvCell('@SUM(A1)')).toBe(`"'@SUM(A1)"`)
  expect(csvCell('\tx')).toBe(`"'\tx"`)
  expect(csvCell('\rx')).toBe(`"'\rx"`)
  expect(csvCell('=HYPERLINK("u","a,b")')).toBe(`"'=HYPERLINK(""u"",""a,b"")"`)
  expect(csvCell(['=1', 'x'])).toBe(`"'=1 x"`)
  expect(csvCell(-5)).toBe('-5')
  expect(csvCell('a=1')).toBe('a=1')
})

test('format wins over Accept; Accept names text/csv unless at q=0', () => {
  expect(wantsCsv('csv', null)).toBe(true)
  expect(wantsCsv('json', 'text/csv')).toBe(false)
  expect(wantsCsv(undefined, 'text/csv')).toBe(true)
  expect(wantsCsv(undefined, 'application/json, Text/CSV;q=0.5')).toBe(true)
  expect(wantsCsv(undefined, 'application/json, text/csv;q=0')).toBe(false)
  expect(wantsCsv(undefined, '*/*')).toBe(false)
  expect(wantsCsv(undefined, null)).toBe(false)
})

test('the stream reads one page per pull, only as its reader asks, and stops at a short page', async () => {
  const asked: number[] = []
  const rows = (n: number) => Array.from({ length: n }, (_, i) => [i])
  const s = csvStream({ header: ['n'], cells: (r: number[]) => r }, rows(CSV_PAGE), (offset) => {
    asked.push(offset)
    return rows(offset < 3 * CSV_PAGE ? CSV_PAGE : 7)
  })
  const reader = s.getReader()
  const text = (c: Uint8Array) => new TextDecoder().decode(c)
  const first = text((await reader.read()).value!)
  expect(first.startsWith('n\r\n0\r\n1\r\n')).toBe(true)
  expect(first.split('\r\n').length - 1).toBe(CSV_PAGE + 1)
  // The first chunk came from the rows read before answering; at most one page ahead is read while it waits.
  expect(asked.length).toBeLessThanOrEqual(1)
  let lines = first.split('\r\n').length - 1
  for (let r = await reader.read(); !r.done; r = await reader.read()) lines += text(r.value).split('\r\n').length - 1
  expect(lines).toBe(1 + 3 * CSV_PAGE + 7)
  expect(asked).toEqual([CSV_PAGE, 2 * CSV_PAGE, 3 * CSV_PAGE])
})
