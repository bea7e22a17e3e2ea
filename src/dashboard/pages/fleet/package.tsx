/** One package's versions across the fleet, most common first, optionally for one source. */
import { qs } from '../../lib/api'
import { count } from '../../lib/format'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { href } from '../../lib/router'
import { ErrorBox, Loading, Page, Table, type Column } from '../../lib/ui'
import { useSession } from '../../lib/session'
import { PackageQuery } from './package-query'
import type { PackageVersions } from '../../lib/fleet'

type Version = PackageVersions['versions'][number]

const columns: Column<Version>[] = [
  { label: 'Version', cell: (v) => v.version, class: 'mono' },
  { label: 'Arch', cell: (v) => v.arch || '—' },
  { label: 'Source', cell: (v) => v.source || '—' },
  { label: 'Minions', cell: (v) => count(v.minion_count), class: 'num' },
]

/** The versions page at `/inventory/:name`. */
export function PackageVersions({ params, query }: PageProps) {
  const name = params.name!
  const source = query.get('source') ?? ''
  const { can } = useSession()
  // A package has a handful of versions, so the API answers them in one list.
  const r = useGet<PackageVersions>(`/api/inventory/packages/${encodeURIComponent(name)}/versions${qs({ source })}`)
  return (
    <Page title={`Package ${name}`}>
      <p><a href={href('/inventory', { source: source || undefined })}>All packages</a></p>
      {source ? <p>Source <strong>{source}</strong> only. <a href={href(`/inventory/${encodeURIComponent(name)}`)}>Show every source</a></p> : null}
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      {r.data ? <p role="status">{count(r.data.total)} distinct version{r.data.total === 1 ? '' : 's'}.</p> : null}
      <Table rows={r.data?.versions} columns={columns} rowKey={(v) => `${v.version}\u0000${v.arch}\u0000${v.source}`} caption={`Versions of ${name}`} empty="No versions." />
      {r.data ? <PackageQuery name={name} path={`/inventory/${encodeURIComponent(name)}`} query={query} /> : null}
      {can('view', 'vuln:*') ? <p><a href={href('/vulns', { package: name })}>Vulnerabilities naming {name}</a></p> : null}
    </Page>
  )
}
