/** Pollers page: the poller settings form and the live status table with Run now (contract §5, §9). */
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError } from '../../lib/api'
import { elapsed, interval, until } from '../../lib/duration'
import { ago, count, dateTime } from '../../lib/format'
import { useGet } from '../../lib/hooks'
import { POLLER_FORM } from '../../lib/settings-fields'
import { Badge, ErrorBox, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import { SectionForm } from './section-form'
import type { PollersOut, PollerStatus, SettingsOut } from './types'

/** How often the status table refreshes while the page is open. */
const REFRESH_MS = 10_000

/** The result of the last Run now, for the live region. */
interface RunNote {
  tone: 'ok' | 'bad'
  text: string
}

/** The event stream's state, one line. */
function StreamStatus({ s }: { s: PollersOut['event_stream'] }) {
  return (
    <dl class="summary">
      <div><dt>State</dt><dd>{s.enabled ? <Badge tone={s.connected ? 'ok' : 'warn'}>{s.connected ? 'connected' : 'not connected'}</Badge> : <Badge tone="muted">off</Badge>}</dd></div>
      <div><dt>Events ingested</dt><dd>{count(s.events_ingested)}</dd></div>
      <div><dt>Frames skipped</dt><dd>{count(s.frames_skipped)}</dd></div>
      <div><dt>Reconnects</dt><dd>{count(s.reconnects)}</dd></div>
      <div><dt>Last error</dt><dd>{s.last_error ?? 'none'}</dd></div>
    </dl>
  )
}

/** The Pollers page. */
export function PollersPage() {
  const settings = useGet<SettingsOut>('/api/admin/settings')
  const [saved, setSaved] = useState<SettingsOut | undefined>()
  const status = useGet<PollersOut>('/api/admin/pollers')
  const [note, setNote] = useState<RunNote | undefined>()
  const [starting, setStarting] = useState<string | undefined>()
  const s = saved ?? settings.data
  const { reload } = status
  useEffect(() => {
    const t = setInterval(reload, REFRESH_MS)
    return () => clearInterval(t)
  }, [reload])
  const runNow = async (name: string) => {
    setStarting(name)
    setNote(undefined)
    try {
      await api('POST', `/api/admin/pollers/${encodeURIComponent(name)}/run`)
      setNote({ tone: 'ok', text: `The ${name} poller was started.` })
      // Most ticks finish within a second or two: look again then, besides the regular refresh.
      setTimeout(reload, 1500)
    } catch (e) {
      const already = e instanceof ApiError && e.status === 409
      setNote({ tone: 'bad', text: already ? `The ${name} poller is already running.` : `Could not start ${name}: ${(e as Error).message}` })
    } finally {
      setStarting(undefined)
      reload()
    }
  }
  const columns: Column<PollerStatus>[] = [
    { label: 'Poller', cell: (p) => <strong>{p.name}</strong>, class: 'nowrap' },
    // Second, so that on a phone the button is visible without scrolling the table sideways.
    {
      label: 'Action', class: 'nowrap',
      cell: (p) => <button type="button" aria-label={`Run now ${p.name}`} disabled={starting === p.name} onClick={() => runNow(p.name)}>Run now</button>,
    },
    {
      label: 'Enabled',
      cell: (p) => p.running ? <Badge tone="info">running</Badge> : p.waiting_for_master && p.enabled ? <Badge tone="warn">waiting for the salt-master</Badge> : <Badge tone={p.enabled ? 'ok' : 'muted'}>{p.enabled ? 'yes' : 'off'}</Badge>,
    },
    { label: 'Interval', cell: (p) => interval(p.interval_seconds) },
    { label: 'Last start', cell: (p) => p.last_started_at ? <time dateTime={p.last_started_at} title={dateTime(p.last_started_at)}>{ago(p.last_started_at)}</time> : 'never' },
    { label: 'Last duration', cell: (p) => elapsed(p.last_duration_ms), class: 'num' },
    { label: 'Last error', cell: (p) => p.last_error ? <span class="bad-text">{p.last_error}</span> : <span class="muted">none</span> },
    { label: 'Next run', cell: (p) => p.next_run_at ? <time dateTime={p.next_run_at} title={dateTime(p.next_run_at)}>{until(p.next_run_at)}</time> : '—' },
    { label: 'Items processed', cell: (p) => count(p.items_processed), class: 'num' },
    { label: 'Runs / errors', cell: (p) => `${count(p.runs)} / ${count(p.errors)}`, class: 'num' },
  ]
  return (
    <Page title="Pollers" actions={<button type="button" onClick={reload}>Refresh</button>}>
      <Panel id="h-status" title="Status">
        <p class="muted small">Refreshed every {REFRESH_MS / 1000} seconds while this page is open.</p>
        <div role="status">{note ? <p class={note.tone === 'ok' ? 'ok' : 'error'}>{note.text}</p> : null}</div>
        <ErrorBox error={status.error} />
        <Loading when={status.loading && !status.data} />
        {status.data ? (
          <>
            <Table caption="Poller status" rows={status.data.pollers} columns={columns} rowKey={(p) => p.name} />
            <h3>Event stream</h3>
            <StreamStatus s={status.data.event_stream} />
          </>
        ) : null}
      </Panel>
      <Panel id="h-poller-settings" title="Poller settings">
        <p class="muted small">Changes apply at once: the pollers are rescheduled without a restart.</p>
        <ErrorBox error={settings.error} />
        {s ? <SectionForm section="pollers" label="Poller settings" specs={POLLER_FORM} saved={s.pollers} onSaved={(out) => { setSaved(out); reload() }} /> : null}
      </Panel>
    </Page>
  )
}
