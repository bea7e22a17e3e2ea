/** Audit log page: who did what, filtered by user, action and age, paged on the server (contract §4). */
import { useEffect, useState } from 'preact/hooks'
import { qs } from '../../lib/api'
import { auditFilters, auditParams } from '../../lib/audit-query'
import { dateTime } from '../../lib/format'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { navigate } from '../../lib/router'
import { Badge, ErrorBox, Field, Form, Loading, Page, Pager, Table, type Column } from '../../lib/ui'
import type { AuditEntry, AuditList } from './types'
import { ExportCsv } from '../../lib/export-link'

const PAGE = 50

/** The age choices of the Since filter, in minutes ('' = any time). */
const SINCE: [string, string][] = [
  ['', 'Any time'], ['15', 'Last 15 minutes'], ['60', 'Last hour'], ['1440', 'Last 24 hours'], ['10080', 'Last 7 days'], ['43200', 'Last 30 days'],
]

/** The audit log page; its filters live in the address so a view can be linked and reloaded. */
export function AuditPage({ query }: PageProps) {
  const f = auditFilters(query)
  const [user, setUser] = useState(f.user)
  const [action, setAction] = useState(f.action)
  const [since, setSince] = useState(f.since === undefined ? '' : String(f.since))
  // Follow the address when it changes from outside the form (back button, links).
  useEffect(() => {
    setUser(f.user)
    setAction(f.action)
    setSince(f.since === undefined ? '' : String(f.since))
  }, [f.user, f.action, f.since])
  const got = useGet<AuditList>(`/api/audit${qs(auditParams(f, PAGE))}`)
  const go = (offset: number) => navigate('/audit', { user: f.user, action: f.action, since: f.since, offset: offset || undefined })
  const search = () => navigate('/audit', { user: user.trim(), action: action.trim(), since })
  const columns: Column<AuditEntry>[] = [
    { label: 'Time', cell: (e) => <time dateTime={e.ts}>{dateTime(e.ts)}</time>, class: 'nowrap' },
    { label: 'User', cell: (e) => e.username, class: 'nowrap' },
    { label: 'Action', cell: (e) => <code>{e.action}</code>, class: 'nowrap' },
    { label: 'Target', cell: (e) => e.target ?? '—' },
    { label: 'Result', cell: (e) => e.ok ? <Badge tone="ok">ok</Badge> : <Badge tone="bad">failed</Badge> },
    { label: 'Detail', cell: (e) => e.detail ?? '' },
    { label: 'Client', cell: (e) => e.client ?? '' },
  ]
  // A visible choice for an age typed into the address by hand, so the select shows what is applied.
  const sinceChoices = f.since !== undefined && !SINCE.some(([v]) => v === String(f.since)) ? [...SINCE, [String(f.since), `Last ${f.since} minutes`] as [string, string]] : SINCE
  return (
    <Page title="Audit log">
      <Form onSubmit={search} label="Filter the audit log" class="toolbar">
        <Field id="au-user" label="User">
          <input id="au-user" autocomplete="off" spellcheck={false} maxLength={64} value={user} onInput={(e) => setUser(e.currentTarget.value)} />
        </Field>
        <Field id="au-action" label="Action">
          <input id="au-action" autocomplete="off" spellcheck={false} maxLength={64} placeholder="e.g. auth.login" value={action} onInput={(e) => setAction(e.currentTarget.value)} />
        </Field>
        <Field id="au-since" label="Since">
          <select id="au-since" value={since} onChange={(e) => setSince(e.currentTarget.value)}>
            {sinceChoices.map(([v, l]) => <option value={v}>{l}</option>)}
          </select>
        </Field>
        <button type="submit" class="primary">Search</button>
        <ExportCsv path="/api/audit" filters={{ ...auditParams(f, PAGE), limit: undefined, offset: undefined }} />
      </Form>
      <p class="muted small">User and action match exactly (for example <code>auth.login</code>, <code>user.create</code>, <code>settings.pollers</code>).</p>
      <ErrorBox error={got.error} />
      <Loading when={got.loading && !got.data} />
      {/* Seven columns do not fit a phone: the table keeps a readable width and scrolls sideways instead. */}
      <div class="wide"><Table caption="Audit log entries" rows={got.data?.entries} columns={columns} rowKey={(e) => e.id} empty="No entries match." /></div>
      <Pager total={got.data?.total} limit={PAGE} offset={f.offset} onChange={go} />
    </Page>
  )
}
