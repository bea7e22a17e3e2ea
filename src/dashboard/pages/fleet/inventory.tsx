/** The package inventory: fleet-wide rows per package name with search, source, sortable headers and paging; refresh status and button. */
import { Ago } from '../../lib/when'
import { api, qs } from '../../lib/api'
import { count, dateTime, ago } from '../../lib/format'
import { PACKAGE_SORTS, type PackageList, type PackageRow, type PackageSort, type RefreshStatus } from '../../lib/fleet'
import { SearchBox, useQueryNav } from '../../lib/filters'
import { useAction, useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { intParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { ErrorBox, Field, Loading, Page, Pager, Panel, Table, type Column } from '../../lib/ui'

const LIMIT = 100

/** The link to one package's versions, keeping the source filter. */
export function packageHref(name: string, source?: string) {
  return href(`/inventory/${encodeURIComponent(name)}`, { source })
}

/** The last and the running refresh, with the Refresh inventory button for those who may collect. */
function RefreshPanel({ onDone }: { onDone: () => void }) {
  const { can } = useSession()
  const st = useGet<RefreshStatus>('/api/inventory/status')
  const act = useAction()
  const refresh = () => act.run(async () => {
    await api('POST', '/api/inventory/refresh', {})
    st.reload()
    // The refresh runs in the background; look again shortly so the panel shows its progress.
    setTimeout(() => { st.reload(); onDone() }, 2000)
  })
  const cur = st.data?.current
  const last = st.data?.last
  return (
    <Panel id="inv-status-h" title="Inventory status">
      <ErrorBox error={st.error} />
      <div role="status">
        {cur ? <p>Refresh running since {dateTime(cur.started_at)}: {count(cur.minions_answered)} of {count(cur.minions_asked)} minions answered, {count(cur.packages_stored)} packages stored.</p> : null}
        {last ? (
          <p>
            Last refresh {last.finished_at ? `finished ${ago(last.finished_at)} (${dateTime(last.finished_at)})` : 'unfinished'}: {count(last.minions_answered)} of {count(last.minions_asked)} minions answered,{' '}
            {count(last.packages_stored)} packages stored.
          </p>
        ) : st.data && !cur ? <p class="muted">No inventory refresh has run yet.</p> : null}
        {/* A running refresh supersedes the last one's failure (after salt-api returns, the broken refresh runs again). */}
        {last?.error && !cur ? <p class="error">Last refresh failed: {last.error}</p> : null}
      </div>
      {can('collect', 'inventory:*') ? (
        <div class="form-actions">
          <button type="button" class="primary" disabled={act.busy || !!st.data?.running} onClick={refresh}>Refresh inventory</button>
          <button type="button" onClick={st.reload}>Check status</button>
        </div>
      ) : null}
      <ErrorBox error={act.error} />
    </Panel>
  )
}

/** The inventory page at `/inventory`. */
export function Inventory({ query }: PageProps) {
  const q = query.get('q') ?? ''
  const source = query.get('source') ?? ''
  const sort = (oneOf(query, 'sort', PACKAGE_SORTS, 'name') || 'name') as PackageSort
  const order = oneOf(query, 'order', ['asc', 'desc'] as const, sort === 'name' ? 'asc' : 'desc') || 'asc'
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav('/inventory', query)
  const r = useGet<PackageList>(`/api/inventory/packages${qs({ q, source, sort, order, limit: LIMIT, offset })}`)
  const onSort = (key: string) => {
    const def = key === 'name' ? 'asc' : 'desc'
    const next = key === sort ? (order === 'asc' ? 'desc' : 'asc') : def
    set({ sort: key === 'name' ? undefined : key, order: next === def ? undefined : next })
  }
  const columns: Column<PackageRow>[] = [
    { label: 'Package', sortKey: 'name', cell: (p) => <a href={packageHref(p.name, source || undefined)}>{p.name}</a> },
    { label: 'Minions', sortKey: 'minion_count', cell: (p) => count(p.minion_count), class: 'num' },
    { label: 'Versions', sortKey: 'version_count', cell: (p) => count(p.version_count), class: 'num' },
    { label: 'Last seen', sortKey: 'last_seen', cell: (p) => <Ago ts={p.last_seen} /> },
  ]
  return (
    <Page title="Packages">
      <RefreshPanel onDone={r.reload} />
      <div class="toolbar">
        <SearchBox id="pkg-search" label="Search packages" value={q} onCommit={(v, replace) => set({ q: v }, replace)} placeholder="name contains…" />
        <Field id="pkg-source" label="Source" hint="apt, rpm, pacman or an OS family; empty for all">
          <input id="pkg-source" list="pkg-sources" size={12} maxLength={64} value={source} aria-describedby="pkg-source-hint" onChange={(e) => set({ source: e.currentTarget.value.trim().toLowerCase() })} />
          <datalist id="pkg-sources">{['apt', 'rpm', 'pacman', 'windows', 'freebsd', 'macos', 'gentoo', 'solaris'].map((x) => <option value={x} />)}</datalist>
        </Field>
      </div>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      <Table rows={r.data?.items} columns={columns} rowKey={(p) => p.name} caption="Packages" empty="No package matches." sort={{ key: sort, dir: order }} onSort={onSort} />
      <Pager total={r.data?.total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} />
    </Page>
  )
}
