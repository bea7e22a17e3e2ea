/** The fleet's vulnerabilities, worst first (or most minions first, or by id), with a severity filter, a search and paging. */
import { qs } from '../../lib/api'
import { count } from '../../lib/format'
import { SearchBox, useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { intParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { ErrorBox, Field, Loading, Page, Pager, Table, type Column } from '../../lib/ui'
import { SeverityBadge } from './severity'
import { SEVERITIES, SORT_LABEL, VULN_SORTS, type FeedList, type VulnList, type VulnRow } from './types'
import { ExportCsv } from '../../lib/export-link'

const LIMIT = 50

const columns: Column<VulnRow>[] = [
  { label: 'Record', cell: (v) => <a class="mono" href={href(`/vulns/${encodeURIComponent(v.id)}`)}>{v.id}</a> },
  { label: 'Severity', cell: (v) => <SeverityBadge severity={v.severity} /> },
  { label: 'Summary', cell: (v) => <>{v.summary}{v.aliases.length ? <div class="muted small">{v.aliases.slice(0, 3).join(', ')}</div> : null}</> },
  { label: 'Packages', cell: (v) => v.packages.join(', ') },
  { label: 'Minions', cell: (v) => count(v.minion_count), class: 'num' },
  { label: 'Fixed in', cell: (v) => (v.fixed_versions.length ? <span class="mono">{v.fixed_versions.slice(0, 3).join(', ')}{v.fixed_versions.length > 3 ? ' …' : ''}</span> : <span class="muted">not fixed</span>) },
]

/** The page at `/vulns`. */
export function VulnsPage({ query }: PageProps) {
  const q = query.get('q') ?? ''
  const pkg = query.get('package') ?? ''
  const severity = oneOf(query, 'severity', SEVERITIES, '')
  const sort = oneOf(query, 'sort', VULN_SORTS, 'severity')
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav('/vulns', query)
  const feeds = useGet<FeedList>('/api/vulns/feeds')
  const r = useGet<VulnList>(`/api/vulns${qs({ q, severity, package: pkg, sort: sort === 'severity' ? undefined : sort, limit: LIMIT, offset })}`)
  const noFeeds = feeds.data && !feeds.data.feeds.length
  return (
    <Page title="Vulnerabilities">
      {noFeeds ? (
        <p role="status" class="warn-text">No vulnerability feed is imported, so nothing can be matched yet: see <a href={href('/vulns/feeds')}>Feeds</a>.</p>
      ) : null}
      <div class="toolbar">
        <SearchBox id="vuln-q" label="Search" hint="Record id, alias (CVE) or summary" value={q} onCommit={(v, replace) => set({ q: v, offset: undefined }, replace)} />
        <Field id="vuln-sev" label="Severity">
          <select id="vuln-sev" value={severity} onChange={(e) => set({ severity: e.currentTarget.value, offset: undefined })}>
            <option value="">All</option>
            {SEVERITIES.map((s) => <option value={s}>{s}</option>)}
          </select>
        </Field>
        <Field id="vuln-sort" label="Sort by">
          <select id="vuln-sort" value={sort} onChange={(e) => set({ sort: e.currentTarget.value === 'severity' ? undefined : e.currentTarget.value, offset: undefined })}>
            {VULN_SORTS.map((s) => <option value={s}>{SORT_LABEL[s]}</option>)}
          </select>
        </Field>
        <ExportCsv path="/api/vulns" filters={{ q, severity, package: pkg, sort: sort === 'severity' ? undefined : sort }} />
      </div>
      {pkg ? <p>Records naming <strong>{pkg}</strong> (or its source package). <a href={href('/vulns', { q: q || undefined, severity: severity || undefined })}>Show all</a></p> : null}
      <ErrorBox error={r.error ?? feeds.error} />
      <Loading when={r.loading && !r.data} />
      {r.data && !noFeeds ? <p role="status">{count(r.data.total)} record{r.data.total === 1 ? '' : 's'} affect{r.data.total === 1 ? 's' : ''} the fleet.</p> : null}
      <Table caption="Vulnerabilities" rows={r.data?.vulns} columns={columns} rowKey={(v) => v.id} empty={noFeeds ? 'No feed imported.' : 'No record affects the fleet.'} />
      <Pager total={r.data?.total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} />
    </Page>
  )
}
