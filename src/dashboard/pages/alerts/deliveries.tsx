/** Deliveries: each notification to each channel, its attempts and its state. */
import { useState } from 'preact/hooks'
import { qs } from '../../lib/api'
import { ago, count, dateTime } from '../../lib/format'
import { useGet } from '../../lib/hooks'
import { Badge, ErrorBox, Field, Loading, Page, Pager, Table, type Column } from '../../lib/ui'
import type { Channel, ChannelList, Delivery, DeliveryList } from './types'

const LIMIT = 50
const TONE = { pending: 'warn', sent: 'ok', failed: 'bad' } as const

/** The deliveries page. */
export function DeliveriesPage() {
  const [status, setStatus] = useState('')
  const [offset, setOffset] = useState(0)
  const list = useGet<DeliveryList>(`/api/alerts/deliveries${qs({ status: status || undefined, limit: LIMIT, offset })}`, 15_000)
  const chans = useGet<ChannelList>('/api/alerts/channels')
  const name = (id: string) => chans.data?.channels.find((c) => c.id === id)?.name ?? id
  const columns: Column<Delivery>[] = [
    { label: 'Notification', cell: (d) => <span class="mono" title={d.notification_id}>{d.notification_id.slice(-8)}</span> },
    { label: 'Channel', cell: (d) => name(d.channel_id) },
    { label: 'Status', cell: (d) => <Badge tone={TONE[d.status]}>{d.status}</Badge> },
    { label: 'Attempts', cell: (d) => count(d.attempts), class: 'num' },
    { label: 'Last error', cell: (d) => d.last_error ? <span class="bad-text">{d.last_error}</span> : <span class="muted">none</span> },
    { label: 'Next attempt', cell: (d) => d.next_attempt_at ? dateTime(d.next_attempt_at) : '—' },
    { label: 'Sent', cell: (d) => d.sent_at ? <time dateTime={d.sent_at} title={dateTime(d.sent_at)}>{ago(d.sent_at)}</time> : '—' },
  ]
  return (
    <Page title="Deliveries" actions={<button type="button" onClick={list.reload}>Refresh</button>}>
      <div class="toolbar">
        <Field id="de-status" label="Status">
          <select id="de-status" value={status} onChange={(e) => { setStatus(e.currentTarget.value); setOffset(0) }}>
            <option value="">All</option><option value="pending">Pending</option><option value="sent">Sent</option><option value="failed">Failed</option>
          </select>
        </Field>
      </div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Deliveries" rows={list.data?.deliveries} columns={columns} rowKey={(d) => d.id} empty="Nothing sent yet." />
      <Pager total={list.data?.total} limit={LIMIT} offset={offset} onChange={setOffset} />
    </Page>
  )
}
