/**
 * One batched run (contract §16): its state and each slice's progress — minions, returns, failures, its job — refreshed
 * every two seconds while the batch runs.
 */
import { count } from '../../lib/format'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { href } from '../../lib/router'
import { Badge, ErrorBox, Loading, Page, Table, type Column } from '../../lib/ui'
import type { Static } from '@sinclair/typebox'
import type { BatchOut } from '../../../features/batches/schema'

/** GET /api/batches/{id}. */
type Batch = Static<typeof BatchOut>
type Slice = Batch['slices'][number] & { n: number }

const TONE = { running: 'info', done: 'ok', stopped: 'warn', failed: 'bad' } as const

/** A slice in words: waiting, running (n of m returned), or finished. */
const sliceState = (s: Slice) => (!s.jid ? 'waiting' : s.finished_at ? 'finished' : 'running')

const COLUMNS: Column<Slice>[] = [
  { label: 'Slice', cell: (s) => s.n + 1, class: 'num' },
  { label: 'State', cell: (s) => <Badge tone={sliceState(s) === 'finished' ? (s.failed ? 'bad' : 'ok') : sliceState(s) === 'running' ? 'info' : 'muted'}>{sliceState(s)}</Badge> },
  { label: 'Minions', cell: (s) => <span class="mono">{s.minions.slice(0, 10).join(', ')}{s.minions.length > 10 ? ` … (${count(s.minions.length)})` : ''}</span> },
  {
    label: 'Progress',
    cell: (s) => (
      <span>
        <progress max={s.minions.length} value={s.returned} aria-label={`Slice ${s.n + 1}: ${s.returned} of ${s.minions.length} returned`} />{' '}
        {s.returned} of {s.minions.length} returned{s.failed ? `, ${s.failed} failed` : ''}
      </span>
    ),
  },
  { label: 'Job', cell: (s) => (s.jid ? <a class="mono" href={href(`/jobs/${encodeURIComponent(s.jid)}`)}>{s.jid}</a> : <span class="muted">not published yet</span>) },
]

/** The batch page. */
export function BatchPage({ params }: PageProps) {
  const got = useGet<Batch>(`/api/batches/${encodeURIComponent(params.id!)}`, 2000)
  const b = got.data
  return (
    <Page title="Batch">
      <ErrorBox error={got.error} />
      <Loading when={got.loading && !b} />
      {b ? (
        <>
          <p role="status">
            <Badge tone={TONE[b.state]}>{b.state}</Badge> {b.fun} on {b.target} ({b.tgt_type}) by {b.initiator}: {b.slices.length} slice{b.slices.length === 1 ? '' : 's'} of {b.size}
            {b.batch_wait ? `, ${b.batch_wait} s between slices` : ''}{b.batch_stop_on_failure ? ', stops at the first failure' : ''}.
            {' '}{b.slices.filter((s) => s.finished_at).length} of {b.slices.length} finished.
          </p>
          {b.error ? <p role="alert">{b.error}</p> : null}
          <Table caption="Slices" rows={b.slices.map((s, n) => ({ ...s, n }))} columns={COLUMNS} rowKey={(s) => s.n} />
        </>
      ) : null}
    </Page>
  )
}
