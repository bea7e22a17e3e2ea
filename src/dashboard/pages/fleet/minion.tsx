/** One minion: summary, state-run history, installed packages and grains, each section paged on the server. */
import { When } from '../../lib/when'
import { MinionVulns } from '../vulns/minion-vulns'
import { qs } from '../../lib/api'
import { ago, count, dateTime } from '../../lib/format'
import { duration, keyTone, prettyJson, runTone, RUN_STATUSES, type MinionDetail, type MinionPackages, type Run, type RunList } from '../../lib/fleet'
import { SearchBox, useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { intParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { PresenceBadge } from './presence'
import { runHref } from './run'
import { DryRun } from './run-states'
import { Badge, ErrorBox, Loading, Page, Pager, Panel, Table, type Column } from '../../lib/ui'
import { ExportCsv } from '../../lib/export-link'

const RUN_LIMIT = 20
const PKG_LIMIT = 50

const runColumns = (minionId: string, canJobs: boolean): Column<Run>[] => [
  {
    label: 'Completed',
    cell: (r) => <a href={runHref(minionId, r.jid)} aria-label={`Run of ${dateTime(r.completed_at)}${r.test ? ' (dry run)' : ''}`}><time datetime={r.completed_at} title={ago(r.completed_at)}>{dateTime(r.completed_at)}</time></a>,
  },
  { label: 'Status', cell: (r) => <span class="badges"><Badge tone={runTone(r.status)}>{r.status}</Badge>{r.test ? ' ' : null}<DryRun test={r.test} /></span> },
  { label: 'Function', cell: (r) => r.fun, class: 'mono' },
  { label: 'SLS', cell: (r) => ((r.sls ?? []).length ? r.sls.join(', ') : '—'), class: 'mono' },
  { label: 'OK', cell: (r) => count(r.pass_count), class: 'num' },
  { label: 'Failed', cell: (r) => count(r.fail_count), class: 'num' },
  { label: 'Changed', cell: (r) => (r.test ? <>{count(r.change_count)} <span class="muted small">would change</span></> : count(r.change_count)), class: 'num' },
  { label: 'Total', cell: (r) => count(r.total_count), class: 'num' },
  { label: 'Duration', cell: (r) => duration(r.duration_ms), class: 'num' },
  { label: 'Job', cell: (r) => (canJobs ? <a href={href(`/jobs/${encodeURIComponent(r.jid)}`)}>{r.jid}</a> : r.jid), class: 'mono' },
]

/** Where a package set came from, said only with several masters (a source beyond `default`). */
const throughSource = (source: string | null) => (source && source !== 'default' ? ` through salt source ${source}` : '')

/** The salt source a run's return came through, a link to this minion's runs through that source. */
const runSourceColumn = (path: string, query: URLSearchParams): Column<Run> => ({
  label: 'Source',
  cell: (r) => {
    const q = new URLSearchParams(query)
    q.set('run_source', r.source)
    q.delete('run_offset')
    return <a href={href(`${path}?${q}`)}>{r.source}</a>
  },
})

/** With several masters (a run beyond `default` on the page, or a source filter) the run list gains its Source column, after Function. */
const withRunSources = (cols: Column<Run>[], rows: Run[] | undefined, filtered: boolean, path: string, query: URLSearchParams) =>
  filtered || rows?.some((r) => r.source !== 'default') ? [...cols.slice(0, 3), runSourceColumn(path, query), ...cols.slice(3)] : cols

type Pkg = MinionPackages['packages'][number]
const pkgColumns: Column<Pkg>[] = [
  { label: 'Package', cell: (p) => p.name },
  { label: 'Version', cell: (p) => p.version, class: 'mono' },
  { label: 'Arch', cell: (p) => p.arch || '—' },
  { label: 'Source', cell: (p) => p.source || '—' },
]

const RUN_KINDS = ['', 'false', 'true'] as const
const RUN_KIND_LABEL = { '': 'Real and dry runs', false: 'Real runs', true: 'Dry runs' } as const

/** The run history with its status filter (badges as toggle buttons), its dry/real filter and pager. */
function Runs({ id, path, query }: { id: string; path: string; query: URLSearchParams }) {
  const { can } = useSession()
  const status = oneOf(query, 'run_status', RUN_STATUSES, '')
  const test = oneOf(query, 'run_test', ['true', 'false'] as const, '')
  const source = query.get('run_source') ?? ''
  const offset = intParam(query, 'run_offset', 0)
  const set = useQueryNav(path, query)
  const r = useGet<RunList>(`/api/minions/${encodeURIComponent(id)}/runs${qs({ status, test, source: source || undefined, limit: RUN_LIMIT, offset })}`)
  return (
    <Panel id="runs-h" title="Run history">
      <div class="toolbar" role="group" aria-label="Run status filter">
        {(['', ...RUN_STATUSES] as const).map((s) => (
          <button type="button" class={`chip ${s ? `badge ${runTone(s)}` : ''}`} aria-pressed={status === s} onClick={() => set({ run_status: s, run_offset: undefined }, false)}>
            {s || 'All runs'}
          </button>
        ))}
      </div>
      <div class="toolbar" role="group" aria-label="Dry run filter">
        {RUN_KINDS.map((k) => (
          <button type="button" class="chip" aria-pressed={test === k} onClick={() => set({ run_test: k, run_offset: undefined }, false)}>
            {RUN_KIND_LABEL[k]}
          </button>
        ))}
        <ExportCsv path={`/api/minions/${encodeURIComponent(id)}/runs`} filters={{ status, test, source: source || undefined }} />
      </div>
      {source ? (
        <div class="toolbar">
          <span>Runs through salt source <strong>{source}</strong></span>
          <button type="button" class="chip" onClick={() => set({ run_source: undefined, run_offset: undefined }, false)}>All sources</button>
        </div>
      ) : null}
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      <div class="wide stack"><Table
          rows={r.data?.runs} columns={withRunSources(runColumns(id, can('view', 'job:*')), r.data?.runs, !!source, path, query)} rowKey={(x) => x.id}
          caption={source ? `Runs through salt source ${source}` : 'Runs'} empty="No runs recorded."
        /></div>
      <Pager total={r.data?.total} limit={RUN_LIMIT} offset={offset} onChange={(o) => set({ run_offset: o }, false)} />
    </Panel>
  )
}

/** The installed packages with a name search and pager. */
function Packages({ id, path, query }: { id: string; path: string; query: URLSearchParams }) {
  const q = query.get('pkg_q') ?? ''
  const offset = intParam(query, 'pkg_offset', 0)
  const set = useQueryNav(path, query)
  const r = useGet<MinionPackages>(`/api/minions/${encodeURIComponent(id)}/packages${qs({ q, limit: PKG_LIMIT, offset })}`)
  return (
    <Panel id="pkgs-h" title="Packages">
      <div class="toolbar">
        <SearchBox id="pkg-q" label="Search packages" value={q} onCommit={(v, replace) => set({ pkg_q: v, pkg_offset: undefined }, replace)} />
      </div>
      {r.data ? <p class="muted">{r.data.collected_at ? `Collected ${dateTime(r.data.collected_at)}${throughSource(r.data.salt_source)}.` : 'Not collected yet.'}</p> : null}
      <ErrorBox error={r.error} />
      <Table rows={r.data?.packages} columns={pkgColumns} rowKey={(p) => `${p.name}\u0000${p.version}\u0000${p.arch}`} caption="Packages" empty={r.data?.collected_at ? 'No packages recorded.' : 'Not collected yet.'} />
      <Pager total={r.data?.total} limit={PKG_LIMIT} offset={offset} onChange={(o) => set({ pkg_offset: o }, false)} />
    </Panel>
  )
}

/** Grains as a key/value table; structured values as pretty JSON text. */
function Grains({ grains }: { grains: Record<string, unknown> }) {
  const keys = Object.keys(grains).sort()
  return (
    <Panel id="grains-h" title="Grains">
      {keys.length ? (
        <details open>
          <summary>All {keys.length} grains</summary>
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Grains</caption>
              <thead><tr><th scope="col">Grain</th><th scope="col">Value</th></tr></thead>
              <tbody>
                {keys.map((k) => {
                  const v = grains[k]
                  return (
                    <tr key={k}>
                      <th scope="row" class="mono">{k}</th>
                      <td>{typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? <span class="mono">{String(v)}</span> : <pre>{prettyJson(v)}</pre>}</td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
        </details>
      ) : <p class="muted">Not collected yet.</p>}
    </Panel>
  )
}

/** The minion page at `/minions/:id`. */
export function Minion({ params, query }: PageProps) {
  const id = params.id!
  const path = `/minions/${encodeURIComponent(id)}`
  const r = useGet<MinionDetail>(`/api/minions/${encodeURIComponent(id)}`)
  const { can } = useSession()
  const m = r.data
  return (
    <Page title={`Minion ${id}`}>
      <p><a href={href('/minions')}>All minions</a></p>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !m} />
      {m ? (
        <Panel id="sum-h" title="Summary">
          <dl class="facts">
            <dt>Minion id</dt><dd class="mono">{m.id}</dd>
            <dt>Key</dt><dd>{m.key_state ? <Badge tone={keyTone(m.key_state)}>{m.key_state}</Badge> : '—'}</dd>
            <dt>Key fingerprint</dt><dd>{m.key_fingerprint ? <span class="mono fingerprint">{m.key_fingerprint}</span> : m.key_state ? 'not read yet' : '—'}</dd>
            <dt>Presence</dt><dd><PresenceBadge m={m} /></dd>
            <dt>Last seen</dt><dd><When ts={m.last_seen} /> <span class="muted">({ago(m.last_seen)})</span></dd>
            <dt>OS</dt><dd>{[m.os, m.osrelease].filter(Boolean).join(' ') || '—'}</dd>
            <dt>IP</dt><dd class="mono">{m.ip ?? '—'}</dd>
            <dt>Salt version</dt><dd>{m.salt_version ?? '—'}</dd>
            <dt>Last run</dt><dd>{m.last_run ? <><Badge tone={runTone(m.last_run.status)}>{m.last_run.status}</Badge> <When ts={m.last_run.completed_at} /></> : '—'}</dd>
          </dl>
        </Panel>
      ) : null}
      {m ? (
        <>
          <Runs id={id} path={path} query={query} />
          <Packages id={id} path={path} query={query} />
          {can('view', 'vuln:*') ? <MinionVulns id={id} /> : null}
        </>
      ) : null}
      {m ? <Grains grains={m.grains} /> : null}
    </Page>
  )
}
