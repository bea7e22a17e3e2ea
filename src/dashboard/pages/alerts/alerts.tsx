/** The Alerts page: firing, resolved or all alerts, newest first, with Ack for those who may. */
import { useState } from 'preact/hooks'
import { api, qs } from '../../lib/api'
import { ago, count, dateTime } from '../../lib/format'
import { useAction, useGet } from '../../lib/hooks'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Loading, Page, Pager, Table, type Column } from '../../lib/ui'
import { href } from '../../lib/router'
import type { Alert, AlertList } from './types'
import { alertLinks } from './rule-form'

const LIMIT = 50
const REFRESH_MS = 15_000

/** The Alerts page. */
export function AlertsPage() {
  const { can } = useSession()
  const [state, setState] = useState<'firing' | 'resolved' | 'all'>('firing')
  const [offset, setOffset] = useState(0)
  const list = useGet<AlertList>(`/api/alerts${qs({ state, limit: LIMIT, offset })}`, REFRESH_MS)
  const ack = useAction()
  const [note, setNote] = useState('')
  const doAck = (a: Alert) => ack.run(async () => {
    await api('POST', `/api/alerts/${a.id}/ack`)
    await list.reload()
    setNote(`Alert on ${a.subject} acknowledged.`)
  })
  const columns: Column<Alert>[] = [
    { label: 'State', cell: (a) => <Badge tone={a.state === 'firing' ? 'bad' : 'ok'}>{a.state}</Badge> },
    { label: 'Rule', cell: (a) => <>{a.rule_name} <span class="muted">({a.kind})</span></> },
    // The subject links to what the alert is about: the minion, and its run and job, a vulnerability, Salt health.
    { label: 'Subject', cell: (a) => {
      const [first, ...more] = alertLinks(a)
      return (
        <>
          {first && first.label === a.subject ? <a class="mono" href={href(first.path)}>{a.subject}</a> : <span class="mono">{a.subject}</span>}
          {[...(first && first.label !== a.subject ? [first] : []), ...more].map((l) => <>{' '}<a class="small" href={href(l.path)}>{l.label}</a></>)}
        </>
      )
    } },
    { label: 'Summary', cell: (a) => a.summary },
    { label: 'Count', cell: (a) => count(a.count), class: 'num' },
    { label: 'First seen', cell: (a) => <time dateTime={a.first_seen_at} title={dateTime(a.first_seen_at)}>{ago(a.first_seen_at)}</time> },
    { label: 'Last seen', cell: (a) => <time dateTime={a.last_seen_at} title={dateTime(a.last_seen_at)}>{ago(a.last_seen_at)}</time> },
    {
      label: 'Acknowledged',
      cell: (a) => a.acked_by
        ? <>by {a.acked_by} {ago(a.acked_at)}</>
        : a.state === 'firing' && can('ack', 'alert:*')
          ? <button type="button" aria-label={`Ack ${a.subject}`} disabled={ack.busy} onClick={() => doAck(a)}>Ack</button>
          : <span class="muted">no</span>,
    },
  ]
  return (
    <Page title="Alerts" actions={<button type="button" onClick={list.reload}>Refresh</button>}>
      <div class="toolbar">
        <Field id="al-state" label="State">
          <select id="al-state" value={state} onChange={(e) => { setState(e.currentTarget.value as typeof state); setOffset(0) }}>
            <option value="firing">Firing</option><option value="resolved">Resolved</option><option value="all">All</option>
          </select>
        </Field>
      </div>
      <p role="status" class="ok">{note}</p>
      <ErrorBox error={list.error ?? ack.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Alerts" rows={list.data?.alerts} columns={columns} rowKey={(a) => a.id} empty={state === 'firing' ? 'Nothing is firing.' : 'No alerts.'} />
      <Pager total={list.data?.total} limit={LIMIT} offset={offset} onChange={setOffset} />
    </Page>
  )
}
