/** A minion's vulnerabilities, worst first: the panel on the minion page. */
import { qs } from '../../lib/api'
import { count } from '../../lib/format'
import { useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { ErrorBox, Panel, Table, type Column } from '../../lib/ui'
import { SeverityBadge } from './severity'
import type { Finding, MinionVulns } from './types'

const columns: Column<Finding>[] = [
  { label: 'Record', cell: (v) => <a class="mono" href={href(`/vulns/${encodeURIComponent(v.id)}`)}>{v.id}</a> },
  { label: 'Severity', cell: (v) => <SeverityBadge severity={v.severity} /> },
  { label: 'Summary', cell: (v) => v.summary },
  { label: 'Package: installed → fixed', cell: (v) => <ul class="plain">{v.packages.map((p) => <li><span>{p.package}</span> <span class="mono">{p.installed}</span> → {p.fixed ? <span class="mono">{p.fixed}</span> : <span class="muted">no fix yet</span>}</li>)}</ul> },
]

/** The Vulnerabilities panel of one minion. */
export function MinionVulns({ id }: { id: string }) {
  const r = useGet<MinionVulns>(`/api/minions/${encodeURIComponent(id)}/vulns${qs({ limit: 200 })}`)
  const d = r.data
  const missing = d ? [d.grains_collected ? null : 'grains', d.packages_collected ? null : 'packages'].filter(Boolean).join(' and ') : ''
  return (
    <Panel id="vulns-h" title="Vulnerabilities">
      <ErrorBox error={r.error} />
      {d ? (
        <p role="status">
          {d.ecosystem ? <>Ecosystem <strong>{d.ecosystem}</strong>: {count(d.total)} record{d.total === 1 ? '' : 's'} affect this minion{d.total > d.vulns.length ? ` (the worst ${d.vulns.length} shown)` : ''}.</>
            : missing ? `Not collected yet: this minion's ${missing} have not been read, so nothing is matched yet.`
              : 'No ecosystem known for this minion (its grains name no OS with a vulnerability feed), so nothing is matched.'}
        </p>
      ) : null}
      <Table caption="Vulnerabilities" rows={r.data?.vulns} columns={columns} rowKey={(v) => v.id} empty={r.data?.ecosystem ? 'No known vulnerability.' : '—'} />
    </Panel>
  )
}
