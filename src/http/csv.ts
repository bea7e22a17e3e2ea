/**
 * The one CSV writer of the API (contract §16 "Export"): RFC 4180 rows, cells a spreadsheet will not run as formulas,
 * and a streamed body that pages through a feature's own read function so memory stays flat however long the list.
 */

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"): = + - @, tab and carriage return. */
const FORMULA_LEAD = /^[=+\-@\t\r]/

/** Rows read from the feature per page while streaming. */
export const CSV_PAGE = 1000

/**
 * One cell: null/undefined empty, arrays joined with a space, objects as JSON, then neutralised and quoted.
 * A text starting with = + - @ tab or CR gets a leading single quote (so `=1+1` is the text `'=1+1`), and is then
 * always quoted; any value with a comma, a double quote, CR or LF is quoted with its quotes doubled (RFC 4180).
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s = Array.isArray(v) ? v.map((x) => (typeof x === 'object' && x !== null ? JSON.stringify(x) : String(x))).join(' ') : typeof v === 'object' ? JSON.stringify(v) : String(v)
  // A number or boolean written by Saltdeck is never a formula; every text (ids, summaries, details) is checked.
  const formula = typeof v !== 'number' && typeof v !== 'boolean' && FORMULA_LEAD.test(s)
  if (formula) s = `'${s}`
  return formula || /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/** One record: cells joined with commas, ended with CRLF (RFC 4180). */
export const csvLine = (cells: unknown[]) => `${cells.map(csvCell).join(',')}\r\n`

/** A CSV export of a list: its column names and how to read one row's cells from a list item. */
export interface CsvColumns<Row> {
  header: string[]
  cells: (row: Row) => unknown[]
}

/**
 * A streamed CSV body: the header, then `first` (read before the answer starts, so a 404 or 422 is still a JSON error),
 * then `page(offset, CSV_PAGE)` until a page comes back short. Each page is read only when the reader wants more.
 */
export function csvStream<Row>(cols: CsvColumns<Row>, first: Row[], page: (offset: number, limit: number) => Row[] | Promise<Row[]>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  let next: Row[] | null = first
  let offset = first.length
  let done = first.length < CSV_PAGE
  let headerSent = false
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      let text = headerSent ? '' : csvLine(cols.header)
      headerSent = true
      if (next === null) {
        if (done) return ctl.close()
        next = await page(offset, CSV_PAGE)
        offset += next.length
        done = next.length < CSV_PAGE
      }
      for (const r of next) text += csvLine(cols.cells(r))
      next = null
      if (text) ctl.enqueue(enc.encode(text))
      if (done) ctl.close()
    },
  }, { highWaterMark: 1 })
}

/** True when a request asks for CSV: `?format=csv`, or no `format` and an Accept header naming text/csv (not with q=0). */
export function wantsCsv(format: string | undefined, accept: string | null): boolean {
  if (format !== undefined) return format === 'csv'
  return !!accept && accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase())
    return type === 'text/csv' && !params.some((p) => /^q=0(\.0*)?$/.test(p))
  })
}
