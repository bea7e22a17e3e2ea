/** One vulnerability record: what it is, where it is fixed, and the minions it affects. */
import { qs } from '../../lib/api'
import { count, dateTime } from '../../lib/format'
import { useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { intParam } from '../../lib/query'
import { href } from '../../lib/router'
import { ErrorBox, Loading, Page, Pager, Panel, Table, type Column } from '../../lib/ui'
import { SeverityBadge } from './severity'
import type { VulnDetail } from './types'
import { ExportCsv } from '../../lib/export-link'

const LIMIT = 100
type Row = VulnDetail['minions'][number]
type Affected = VulnDetail['affected'][number]

const minionColumns: Column<Row>[] = [
  { label: 'Minion', cell: (m) => <a href={href(`/minions/${encodeURIComponent(m.minion_id)}`)}>{m.minion_id}</a> },
  { label: 'Package', cell: (m) => m.package },
  { label: 'Installed', cell: (m) => m.installed, class: 'mono' },
  { label: 'Fixed in', cell: (m) => (m.fixed ? <span class="mono">{m.fixed}</span> : <span class="muted">no fix yet</span>) },
]

/** How a range reads: "from 0 to 3.0.13-1 (fixed)", "up to 3.0.11 (last affected)". */
const rangeText = (events: Record<string, string>[]) =>
  events.map((e) => (e.introduced !== undefined ? `from ${e.introduced}` : e.fixed !== undefined ? `fixed in ${e.fixed}` : `last affected ${e.last_affected}`)).join(', ')

const affectedColumns: Column<Affected>[] = [
  { label: 'Ecosystem', cell: (a) => a.ecosystem },
  { label: 'Package', cell: (a) => <a href={href(`/inventory/${encodeURIComponent(a.package)}`)}>{a.package}</a> },
  { label: 'Affected ranges', cell: (a) => <ul class="plain">{a.ranges.map((r) => <li class="mono">{rangeText(r)}</li>)}{a.versions.length ? <li class="mono">versions {a.versions.slice(0, 5).join(', ')}</li> : null}</ul> },
  { label: 'Fixed in', cell: (a) => {
    const fixed = a.ranges.flatMap((r) => r.filter((e) => e.fixed !== undefined).map((e) => e.fixed!))
    return fixed.length ? <span class="mono">{fixed.join(', ')}</span> : <span class="muted">not fixed</span>
  } },
]

/** The page at `/vulns/:id`. */
export function VulnRecordPage({ params, query }: PageProps) {
  const id = params.id!
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav(`/vulns/${encodeURIComponent(id)}`, query)
  const r = useGet<VulnDetail>(`/api/vulns/${encodeURIComponent(id)}${qs({ limit: LIMIT, offset })}`)
  const v = r.data
  return (
    <Page title={`Vulnerability ${id}`}>
      <p><a href={href('/vulns')}>All vulnerabilities</a></p>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !v} />
      {v ? (
        <Panel id="vuln-sum-h" title="Record">
          <dl class="facts">
            <dt>Id</dt><dd class="mono">{v.id}</dd>
            <dt>Aliases</dt><dd>{v.aliases.length ? v.aliases.join(', ') : '—'}</dd>
            <dt>Severity</dt><dd><SeverityBadge severity={v.severity} score={v.score} /></dd>
            <dt>Summary</dt><dd>{v.summary || '—'}</dd>
            <dt>Published</dt><dd>{v.published ? dateTime(v.published) : '—'}</dd>
            <dt>Modified</dt><dd>{v.modified ? dateTime(v.modified) : '—'}</dd>
            <dt>Minions affected</dt><dd>{count(v.minion_count)}</dd>
          </dl>
          {v.details ? <pre class="details">{v.details}</pre> : null}
        </Panel>
      ) : null}
      {v ? (
        <Panel id="vuln-aff-h" title="Affected packages and fixes">
          <Table caption="Affected packages" rows={v.affected} columns={affectedColumns} rowKey={(a) => `${a.ecosystem}\u0000${a.package}`} empty="No entry in a matched ecosystem." />
        </Panel>
      ) : null}
      {v ? (
        <Panel id="vuln-min-h" title="Affected minions">
          <p role="status">{count(v.minion_total)} affected package{v.minion_total === 1 ? '' : 's'} on {count(v.minion_count)} minion{v.minion_count === 1 ? '' : 's'}.</p>
          <p><ExportCsv path={`/api/vulns/${encodeURIComponent(id)}`} filters={{}} /></p>
          <Table caption="Affected minions" rows={v.minions} columns={minionColumns} rowKey={(m) => `${m.minion_id}\u0000${m.package}`} empty="No minion is affected." />
          <Pager total={v.minion_total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} />
        </Panel>
      ) : null}
    </Page>
  )
}
