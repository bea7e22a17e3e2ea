/** Minion keys by state (pending first) with their fingerprints and Accept / Reject / Delete (the last two confirmed); lists are filtered and paged in the page, 100 rows at a time. */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { count } from '../../lib/format'
import { fingerprintOf, keyCountTone, pageOfList, type KeyLists } from '../../lib/fleet'
import { SearchBox, useQueryNav } from '../../lib/filters'
import { useAction, useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Loading, Page, Pager, Table, type Column } from '../../lib/ui'

const LIMIT = 100
const STATES = [
  ['pending', 'Pending'], ['accepted', 'Accepted'], ['rejected', 'Rejected'], ['denied', 'Denied'],
] as const
type State = (typeof STATES)[number][0]
type Act = 'accept' | 'reject' | 'delete'

/** One state's list: a page of ids from the filtered list, each with the actions that make sense for that state. */
function KeyList({ state, title, ids, fingerprint, filter, busy, onAct }: {
  state: State
  title: string
  ids: string[]
  fingerprint: (id: string) => string | null
  filter: string
  busy: boolean
  onAct: (id: string, act: Act) => void
}) {
  const { can } = useSession()
  const [offset, setOffset] = useState(0)
  const page = pageOfList(ids, filter, offset, LIMIT)
  const columns: Column<string>[] = [
    { label: 'Minion', cell: (id) => (can('view', 'minion:*') ? <a href={href(`/minions/${encodeURIComponent(id)}`)}>{id}</a> : id) },
    // Compare it with `salt-call --local key.finger` on the minion before accepting.
    { label: 'Fingerprint', cell: (id) => { const fp = fingerprint(id); return fp ? <span class="mono fingerprint">{fp}</span> : <span class="muted">not read yet</span> } },
    {
      label: 'Actions',
      cell: (id) => (
        <div class="row-actions">
          {/* Key grants are checked on the concrete key (`accept key:web-*` accepts web-01 only). */}
          {state !== 'accepted' && can('accept', `key:${id}`) ? <button type="button" class="primary" aria-label={`Accept ${id}`} disabled={busy} onClick={() => onAct(id, 'accept')}>Accept</button> : null}
          {state !== 'rejected' && can('reject', `key:${id}`) ? <ConfirmButton label="Reject" name={`Reject ${id}`} question={`Reject the key of ${id}?`} busy={busy} onConfirm={() => onAct(id, 'reject')} /> : null}
          {can('delete', `key:${id}`) ? <ConfirmButton label="Delete" name={`Delete ${id}`} question={`Delete the key of ${id}?`} busy={busy} onConfirm={() => onAct(id, 'delete')} /> : null}
        </div>
      ),
    },
  ]
  return (
    <section class="panel" aria-labelledby={`keys-${state}`}>
      <h2 id={`keys-${state}`}>{title} <Badge tone={keyCountTone(state, ids.length)}>{count(ids.length)}</Badge></h2>
      {ids.length ? (
        <>
          <Table rows={page.rows} columns={columns} rowKey={(id) => id} caption={`${title} keys`} empty="No key matches the filter." />
          {page.total > LIMIT ? <Pager total={page.total} limit={LIMIT} offset={page.offset} onChange={setOffset} /> : null}
        </>
      ) : <p class="muted">None.</p>}
    </section>
  )
}

const DONE: Record<Act, string> = { accept: 'accepted', reject: 'rejected', delete: 'deleted' }

/** The keys page at `/keys`. */
export function Keys({ query }: PageProps) {
  const q = query.get('q') ?? ''
  const set = useQueryNav('/keys', query)
  const r = useGet<KeyLists>('/api/keys')
  const act = useAction()
  const [done, setDone] = useState('')
  const onAct = (id: string, a: Act) => {
    setDone('')
    void act.run(async () => {
      await api(a === 'delete' ? 'DELETE' : 'POST', a === 'delete' ? `/api/keys/${encodeURIComponent(id)}` : `/api/keys/${encodeURIComponent(id)}/${a}`)
      setDone(`Key of ${id} ${DONE[a]}.`)
    }).then(() => r.reload())
  }
  return (
    <Page title="Keys">
      <div class="toolbar">
        <SearchBox id="key-q" label="Filter keys" value={q} onCommit={(v, replace) => set({ q: v }, replace)} placeholder="minion id contains…" maxLength={255} />
      </div>
      <ErrorBox error={act.error} />
      <p role="status" class="ok">{done}</p>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      {r.data ? STATES.map(([s, title]) => <KeyList key={s} state={s} title={title} ids={r.data![s]} fingerprint={(id) => fingerprintOf(r.data!, id)} filter={q} busy={act.busy} onAct={onAct} />) : null}
    </Page>
  )
}
