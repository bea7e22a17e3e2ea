/** "Who runs this package below/above a version": the version query of the package page, kept in the hash query. */
import { useState } from 'preact/hooks'
import { qs } from '../../lib/api'
import { count } from '../../lib/format'
import { useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import { intParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { ErrorBox, Field, Pager, Panel, Table, type Column } from '../../lib/ui'
import { ExportCsv } from '../../lib/export-link'
import type { PackageMinions } from '../../lib/fleet'

const LIMIT = 100
const OPS = ['lt', 'le', 'eq', 'ne', 'ge', 'gt'] as const
const OP_LABEL: Record<(typeof OPS)[number], string> = { lt: 'below', le: 'at most', eq: 'exactly', ne: 'other than', ge: 'at least', gt: 'above' }

type Answer = PackageMinions
type Row = Answer['minions'][number]

const columns: Column<Row>[] = [
  { label: 'Minion', cell: (m) => <a href={href(`/minions/${encodeURIComponent(m.minion_id)}`)}>{m.minion_id}</a> },
  { label: 'Package', cell: (m) => m.package },
  { label: 'Version', cell: (m) => m.version, class: 'mono' },
  { label: 'Arch', cell: (m) => m.arch || '—' },
  { label: 'Source', cell: (m) => m.source },
]

/** With several masters (a holder collected beyond `default`, or a salt source filter) the list names each holder's master. */
const withSaltSources = (rows: Row[] | undefined, filtered: boolean) =>
  filtered || rows?.some((m) => m.salt_source !== 'default') ? [...columns, { label: 'Salt source', cell: (m: Row) => m.salt_source }] : columns

/** The query form and, once asked, the matching minions (in the package system's own version order). */
export function PackageQuery({ name, path, query }: { name: string; path: string; query: URLSearchParams }) {
  const op = oneOf(query, 'op', OPS, '')
  const version = query.get('version') ?? ''
  const source = query.get('source') ?? ''
  const saltSource = query.get('salt_source') ?? ''
  const binaries = query.get('binaries') === '1'
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav(path, query)
  const [draftOp, setDraftOp] = useState<string>(op || 'lt')
  const [draft, setDraft] = useState(version)
  const [draftBin, setDraftBin] = useState(binaries)
  const asked = !!(op && version)
  const r = useGet<Answer>(asked ? `/api/inventory/packages/${encodeURIComponent(name)}/minions${qs({ op, version, source, salt_source: saltSource || undefined, binaries: binaries || undefined, limit: LIMIT, offset })}` : null)
  // The packages built from this name as a source package (openssl → libssl3), offered as vulnerability records reach them.
  const built = useGet<Answer>(`/api/inventory/packages/${encodeURIComponent(name)}/minions${qs({ limit: 1 })}`).data?.binaries ?? []
  return (
    <Panel id="pkg-query-h" title={`Who runs ${name} …`}>
      <form class="toolbar" onSubmit={(e) => { e.preventDefault(); set({ op: draftOp, version: draft.trim(), binaries: draftBin && built.length ? '1' : undefined, offset: undefined }) }}>
        <Field id="pq-op" label="Version is">
          <select id="pq-op" value={draftOp} onChange={(e) => setDraftOp(e.currentTarget.value)}>
            {OPS.map((o) => <option value={o}>{OP_LABEL[o]}</option>)}
          </select>
        </Field>
        <Field id="pq-version" label="Version">
          <input id="pq-version" class="mono" value={draft} maxLength={256} required placeholder="3.0.11-1~deb12u1" onInput={(e) => setDraft(e.currentTarget.value)} />
        </Field>
        {built.length ? (
          <label class="check">
            <input type="checkbox" checked={draftBin} onChange={(e) => setDraftBin(e.currentTarget.checked)} /> Also the packages built from source {name}: {built.join(', ')}
          </label>
        ) : null}
        <button type="submit">Find minions</button>
      </form>
      <ErrorBox error={r.error} />
      {asked && r.data ? (
        <p role="status">{count(r.data.total)} minion package{r.data.total === 1 ? '' : 's'} with {name} {OP_LABEL[op as (typeof OPS)[number]]} <span class="mono">{version}</span>.</p>
      ) : null}
      {asked ? <Table caption={`Minions with ${name} ${OP_LABEL[op as (typeof OPS)[number]]} ${version}`} rows={r.data?.minions} columns={withSaltSources(r.data?.minions, !!saltSource)} rowKey={(m) => `${m.minion_id}\u0000${m.version}\u0000${m.arch}`} empty="No minion matches." /> : null}
      {asked ? <p><ExportCsv path={`/api/inventory/packages/${encodeURIComponent(name)}/minions`} filters={{ op, version, source, salt_source: saltSource || undefined, binaries: binaries || undefined }} /></p> : null}
      {asked ? <Pager total={r.data?.total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} /> : null}
    </Panel>
  )
}
