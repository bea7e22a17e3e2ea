/** The "Export CSV" link of a list page (contract §16 "Export"). */
import { qs } from './api'

/**
 * A plain link to the list's API path with the page's filters and `format=csv`: the browser downloads it with the
 * session cookie, and the server streams every matching row (paging parameters are left out: the export is all of them).
 */
export function ExportCsv({ path, filters }: { path: string; filters: Record<string, string | number | boolean | undefined | null> }) {
  return <a class="button export-csv" href={`${path}${qs({ ...filters, format: 'csv' })}`} download>Export CSV</a>
}
