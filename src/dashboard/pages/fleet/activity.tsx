/** The activity feed: every filter of GET /api/activity in the hash query, and live updates on page 1 from the SSE stream. */
import { Ago } from '../../lib/when'
import { useEffect, useRef, useState } from 'preact/hooks'
import { qs } from '../../lib/api'
import { ACTIVITY_CATEGORIES, ACTIVITY_TYPES, duration, prependLive, type ActivityEvent, type ActivityList } from '../../lib/fleet'
import { SearchBox, useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { flagParam, intParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Loading, Page, Pager, Table, type Column } from '../../lib/ui'

const LIMIT = 50
/** Time windows offered for `since_minutes` (the API takes 1..10080). */
const WINDOWS: [number, string][] = [[15, 'Last 15 minutes'], [60, 'Last hour'], [360, 'Last 6 hours'], [1440, 'Last 24 hours'], [10080, 'Last 7 days']]

type Live = 'connecting' | 'live' | 'reconnecting' | 'closed' | 'paused' | 'off'

/** The filters the list and the stream share, read from the hash query. */
function filtersOf(query: URLSearchParams) {
  const cats = (query.get('categories') ?? query.get('category') ?? '').split(',').filter((c) => (ACTIVITY_CATEGORIES as readonly string[]).includes(c))
  return {
    since_minutes: intParam(query, 'since_minutes', 0, 1, 10080) || undefined,
    // One category uses `category`; several use `categories`; all three is no filter.
    category: cats.length === 1 ? cats[0] : undefined,
    categories: cats.length > 1 && cats.length < ACTIVITY_CATEGORIES.length ? cats.join(',') : undefined,
    event_type: oneOf(query, 'event_type', ACTIVITY_TYPES, '') || undefined,
    minion_id: query.get('minion_id') || undefined,
    minion: query.get('minion') || undefined,
    jid: query.get('jid') || undefined,
    search: query.get('search') || undefined,
    hide_dispatch: flagParam(query, 'hide_dispatch') || undefined,
    hide_routine: flagParam(query, 'hide_routine') || undefined,
    success: oneOf(query, 'success', ['true', 'false'] as const, '') || undefined,
  }
}

const columns = (canMinions: boolean, canJobs: boolean): Column<ActivityEvent>[] => [
  { label: 'Time', cell: (e) => <Ago ts={e.ts} /> },
  { label: 'Event', cell: (e) => <Badge tone={e.event_type === 'job.ret' ? (e.success === false ? 'bad' : e.changed ? 'info' : 'ok') : 'muted'}>{e.event_type}</Badge> },
  { label: 'Summary', cell: (e) => e.summary },
  { label: 'Minion', cell: (e) => (e.minion_id ? (canMinions ? <a href={href(`/minions/${encodeURIComponent(e.minion_id)}`)}>{e.minion_id}</a> : e.minion_id) : '—') },
  { label: 'Job', cell: (e) => (e.jid ? (canJobs ? <a href={href(`/jobs/${encodeURIComponent(e.jid)}`)}>{e.jid}</a> : e.jid) : '—'), class: 'mono' },
  { label: 'By', cell: (e) => e.initiator ?? '—' },
  { label: 'Duration', cell: (e) => duration(e.duration_ms), class: 'num' },
]

const LIVE_TEXT: Record<Live, string> = {
  connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', closed: 'Disconnected', paused: 'Paused', off: 'Live updates on page 1 only',
}

/** The activity page at `/activity`. */
export function Activity({ query }: PageProps) {
  const { can } = useSession()
  const f = filtersOf(query)
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav('/activity', query)
  const r = useGet<ActivityList>(`/api/activity${qs({ ...f, limit: LIMIT, offset })}`)
  const [shown, setShown] = useState<{ total: number; events: ActivityEvent[] } | undefined>()
  const [paused, setPaused] = useState(false)
  // The Minion field keeps what is typed until it is committed (change): a live event re-rendering the page meanwhile
  // must not put the query's old value back into it.
  const [minionText, setMinionText] = useState(f.minion ?? '')
  useEffect(() => setMinionText(f.minion ?? ''), [f.minion])
  const [live, setLive] = useState<Live>('off')
  const top = useRef<number | undefined>(undefined)

  useEffect(() => {
    if (r.data) setShown(r.data)
  }, [r.data])
  top.current = shown?.events[0]?.id

  const streamQs = qs({ ...f })
  useEffect(() => {
    if (!r.data || offset > 0) return setLive('off')
    if (paused) return setLive('paused')
    // Start after the newest shown row so nothing between the list load (or the pause) and the connection is lost.
    const es = new EventSource(`/api/activity/stream${qs({ ...f, after_id: top.current })}`)
    setLive('connecting')
    let buffer: ActivityEvent[] = []
    let timer: ReturnType<typeof setTimeout> | undefined
    // Bursts (a replay, a state.apply on many minions) are applied in one render rather than one per frame.
    const flush = () => {
      timer = undefined
      const batch = buffer
      buffer = []
      setShown((s) => {
        if (!s) return s
        const m = prependLive(s.events, batch, LIMIT)
        return { total: s.total + m.added, events: m.events }
      })
    }
    es.addEventListener('activity', (m) => {
      try {
        buffer.push(JSON.parse((m as MessageEvent<string>).data))
      } catch {
        return
      }
      timer ??= setTimeout(flush, 150)
    })
    es.onopen = () => setLive('live')
    es.onerror = () => setLive(es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting')
    return () => {
      es.close()
      if (timer) clearTimeout(timer)
    }
  }, [r.data, paused, offset, streamQs])

  const cats = f.category ? [f.category] : f.categories ? f.categories.split(',') : []
  const toggleCat = (c: string, on: boolean) => {
    const all = cats.length ? cats : [...ACTIVITY_CATEGORIES]
    const next = on ? [...all, c] : all.filter((x) => x !== c)
    set({ category: undefined, categories: next.length && next.length < ACTIVITY_CATEGORIES.length ? next.join(',') : undefined })
  }

  return (
    <Page title="Activity" actions={
      <div class="live">
        <span role="status"><Badge tone={live === 'live' ? 'ok' : live === 'reconnecting' || live === 'closed' ? 'warn' : 'muted'}>{LIVE_TEXT[live]}</Badge></span>
        {offset === 0 ? <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>{paused ? 'Resume' : 'Pause'}</button> : null}
      </div>
    }>
      <div class="panel filters">
        <div class="toolbar">
          <SearchBox id="act-search" label="Search activity" value={f.search ?? ''} onCommit={(v, replace) => set({ search: v }, replace)} />
          <Field id="act-since" label="Time window">
            <select id="act-since" value={String(f.since_minutes ?? '')} onChange={(e) => set({ since_minutes: e.currentTarget.value })}>
              <option value="">Any time</option>
              {WINDOWS.map(([m, l]) => <option value={String(m)}>{l}</option>)}
            </select>
          </Field>
          <Field id="act-success" label="Outcome">
            <select id="act-success" value={f.success ?? ''} onChange={(e) => set({ success: e.currentTarget.value })}>
              <option value="">Any outcome</option>
              <option value="true">Succeeded</option>
              <option value="false">Failed</option>
            </select>
          </Field>
          <Field id="act-type" label="Event type">
            <select id="act-type" value={f.event_type ?? ''} onChange={(e) => set({ event_type: e.currentTarget.value })}>
              <option value="">All types</option>
              {ACTIVITY_TYPES.map((t) => <option value={t}>{t}</option>)}
            </select>
          </Field>
          <Field id="act-minion" label="Minion" hint="Part of the id (case-sensitive)">
            <input id="act-minion" value={minionText} maxLength={255} placeholder="web-0" aria-describedby="act-minion-hint" onInput={(e) => setMinionText(e.currentTarget.value)} onChange={(e) => set({ minion: e.currentTarget.value.trim() })} />
          </Field>
          {f.minion_id ? (
            <p class="field">Only minion <span class="mono">{f.minion_id}</span> <button type="button" onClick={() => set({ minion_id: undefined })}>Show all minions</button></p>
          ) : null}
          <Field id="act-jid" label="Job id">
            <input id="act-jid" class="mono" value={f.jid ?? ''} maxLength={64} onChange={(e) => set({ jid: e.currentTarget.value.trim() })} />
          </Field>
        </div>
        <div class="toolbar">
          <fieldset class="checks inline">
            <legend>Categories</legend>
            {ACTIVITY_CATEGORIES.map((c) => (
              <label class="check"><input type="checkbox" checked={!cats.length || cats.includes(c)} onChange={(e) => toggleCat(c, e.currentTarget.checked)} /> {c === 'job' ? 'Jobs' : c === 'key' ? 'Keys' : 'Minions'}</label>
            ))}
          </fieldset>
          <label class="check"><input type="checkbox" checked={!!f.hide_dispatch} onChange={(e) => set({ hide_dispatch: e.currentTarget.checked ? 1 : undefined })} /> Hide dispatches (job.new)</label>
          <label class="check"><input type="checkbox" checked={!!f.hide_routine} onChange={(e) => set({ hide_routine: e.currentTarget.checked ? 1 : undefined })} /> Hide routine returns</label>
        </div>
      </div>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !shown} />
      <div class="wide"><Table rows={shown?.events} columns={columns(can('view', 'minion:*'), can('view', 'job:*'))} rowKey={(e) => e.id} caption="Activity events" empty="No events match." /></div>
      <Pager total={shown?.total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} />
    </Page>
  )
}
