/** The minion list: id search, status filter and server-side paging, all kept in the hash query. */
import { Ago } from '../../lib/when'
import { qs } from '../../lib/api'
import { keyTone, MINION_STATUSES, runTone, type MinionList, type MinionSummary } from '../../lib/fleet'
import { SearchBox, useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { intParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { PresenceBadge } from './presence'
import { Badge, ErrorBox, Field, Loading, Page, Pager, Table, type Column } from '../../lib/ui'
import { ExportCsv } from '../../lib/export-link'

const LIMIT = 50

/** The link to one minion's page. */
export function minionHref(id: string) {
  return href(`/minions/${encodeURIComponent(id)}`)
}

const columns: Column<MinionSummary>[] = [
  { label: 'Minion', cell: (m) => <a href={minionHref(m.id)}>{m.id}</a> },
  { label: 'Key', cell: (m) => (m.key_state ? <Badge tone={keyTone(m.key_state)}>{m.key_state}</Badge> : '—') },
  { label: 'Online', cell: (m) => <PresenceBadge m={m} /> },
  { label: 'Last seen', cell: (m) => <Ago ts={m.last_seen} /> },
  { label: 'OS', cell: (m) => [m.os, m.osrelease].filter(Boolean).join(' ') || '—' },
  { label: 'IP', cell: (m) => m.ip ?? '—', class: 'mono' },
  { label: 'Salt', cell: (m) => m.salt_version ?? '—' },
  { label: 'Last run', cell: (m) => (m.last_run ? <Badge tone={runTone(m.last_run.status)}>{m.last_run.status}</Badge> : '—') },
]

/** Each source a minion was seen through, a link to the minions of that source. */
const sourceColumn: Column<MinionSummary> = {
  label: 'Source',
  cell: (m) => (m.sources.length ? m.sources.map((s, i) => <>{i ? ', ' : ''}<a href={href(`/minions?source=${encodeURIComponent(s)}`)}>{s}</a></>) : '—'),
}

/** With several masters (a source beyond `default` on the page, or a source filter) the list gains its Source column. */
const withSources = (rows: MinionSummary[] | undefined, filtered: boolean) =>
  filtered || rows?.some((m) => m.sources.some((s) => s !== 'default')) ? [...columns.slice(0, 2), sourceColumn, ...columns.slice(2)] : columns

/** The minions page at `/minions`. */
export function Minions({ query }: PageProps) {
  const q = query.get('q') ?? ''
  const status = oneOf(query, 'status', MINION_STATUSES, '')
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav('/minions', query)
  const source = query.get('source') ?? ''
  const r = useGet<MinionList>(`/api/minions${qs({ q, status, source: source || undefined, limit: LIMIT, offset })}`)
  return (
    <Page title="Minions">
      <div class="toolbar">
        <SearchBox id="minion-q" label="Search minions" value={q} onCommit={(v, replace) => set({ q: v }, replace)} placeholder="web, web-*, os:Debian, G@role:db" maxLength={255}
          hint="Text: id contains it. *, ? or [ ]: salt glob on the whole id (case-sensitive). grain:value or G@grain:value: a grain, the value may be a glob." />
        <Field id="minion-status" label="Status">
          <select id="minion-status" value={status} onChange={(e) => set({ status: e.currentTarget.value })}>
            <option value="">All</option>
            {MINION_STATUSES.map((s) => <option value={s}>{s}</option>)}
          </select>
        </Field>
        <ExportCsv path="/api/minions" filters={{ q, status }} />
      </div>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      <div class="wide"><Table rows={r.data?.minions} columns={withSources(r.data?.minions, !!source)} rowKey={(m) => m.id} caption={source ? `Minions of salt source ${source}` : 'Minions'} empty="No minion matches." /></div>
      <Pager total={r.data?.total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} />
    </Page>
  )
}
