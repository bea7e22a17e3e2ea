/**
 * Minion keys by state (pending first) with their fingerprints and Accept / Reject / Delete (the last two confirmed);
 * pending keys can be selected and accepted or rejected together, after a confirmation listing each fingerprint. Lists
 * are filtered and paged in the page, 100 rows at a time.
 */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { count } from '../../lib/format'
import { fingerprintOf, keyCountTone, MINION_FINGER, MINION_FINGER_3008, pageOfList, type KeyLists, type SaltHealth } from '../../lib/fleet'
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

/** Where to read the fingerprint on the minion, for this master's version (both commands while it is not known). */
function FingerHint() {
  const { can } = useSession()
  // Salt health needs `view minion:*`; without it both commands are given.
  const h = useGet<SaltHealth>(can('view', 'minion:*') ? '/api/salt/health' : null)
  const armored = h.data?.known_faults.some((f) => f.id === 'key-finger-armor')
  const known = !!h.data?.master.version
  return (
    <p class="muted" id="finger-hint">
      Before accepting a key, compare its fingerprint with the minion's own, printed on the minion by{' '}
      {known && !armored ? <code>{MINION_FINGER}</code> : null}
      {known && armored ? <><code>{MINION_FINGER_3008}</code> (this master runs Salt {h.data!.master.version}, whose fingerprints include the key's BEGIN/END lines: <code>{MINION_FINGER}</code> prints another value)</> : null}
      {!known ? <><code>{MINION_FINGER}</code>, or on a Salt 3008.0–3008.3 master <code>{MINION_FINGER_3008}</code></> : null}.
    </p>
  )
}

/** One state's list: a page of ids from the filtered list, each with the actions that make sense for that state. */
function KeyList({ state, title, ids, fingerprint, masters, filter, busy, onAct, selected, onSelect }: {
  state: State
  title: string
  ids: string[]
  fingerprint: (id: string) => string | null
  /** The salt sources a key was seen through; null with one master only (no column then). */
  masters: ((id: string) => string[]) | null
  filter: string
  busy: boolean
  onAct: (id: string, act: Act) => void
  /** Pending keys only: the ids selected for a bulk action, and how a row's checkbox changes them. */
  selected?: Set<string>
  onSelect?: (ids: string[], on: boolean) => void
}) {
  const { can } = useSession()
  const [offset, setOffset] = useState(0)
  const page = pageOfList(ids, filter, offset, LIMIT)
  const selectable = !!selected && !!onSelect && (can('accept', 'key:*') || can('reject', 'key:*'))
  const columns: Column<string>[] = [
    ...(selectable ? [{
      label: 'Select', cell: (id: string) => <input type="checkbox" aria-label={`Select ${id}`} checked={selected!.has(id)} disabled={busy} onChange={(e) => onSelect!([id], (e.target as HTMLInputElement).checked)} />,
    }] : []),
    { label: 'Minion', cell: (id) => (can('view', 'minion:*') ? <a href={href(`/minions/${encodeURIComponent(id)}`)}>{id}</a> : id) },
    ...(masters ? [{ label: 'Source', cell: (id: string) => masters(id).join(', ') || <span class="muted">not seen yet</span> }] : []),
    // Compare it with the minion's own before accepting (FingerHint says how on this master's version).
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
          {selectable ? (
            <div class="toolbar">
              <button type="button" disabled={busy} onClick={() => onSelect!(page.rows, true)}>Select all shown</button>
              <button type="button" disabled={busy || !selected!.size} onClick={() => onSelect!([...selected!], false)}>Clear selection</button>
            </div>
          ) : null}
          <Table rows={page.rows} columns={columns} rowKey={(id) => id} caption={`${title} keys`} empty="No key matches the filter." />
          {page.total > LIMIT ? <Pager total={page.total} limit={LIMIT} offset={page.offset} onChange={setOffset} /> : null}
        </>
      ) : <p class="muted">None.</p>}
    </section>
  )
}

const DONE: Record<Act, string> = { accept: 'accepted', reject: 'rejected', delete: 'deleted' }

/** The bulk action bar over the pending keys: what is selected, then a confirmation listing each key's fingerprint. */
function BulkBar({ ids, fingerprint, busy, onRun }: { ids: string[]; fingerprint: (id: string) => string | null; busy: boolean; onRun: (act: 'accept' | 'reject') => void }) {
  const { can } = useSession()
  const [asking, setAsking] = useState<'accept' | 'reject' | null>(null)
  if (!ids.length) return null
  const n = `${ids.length} key${ids.length === 1 ? '' : 's'}`
  return (
    <section class="panel" aria-label="Selected keys">
      {asking ? (
        <div role="group" aria-label={`${asking === 'accept' ? 'Accept' : 'Reject'} ${n}?`}>
          <p role="alert">{asking === 'accept' ? 'Accept' : 'Reject'} these {n}? Compare each fingerprint with the minion's own first.</p>
          <ul class="plain">
            {ids.map((id) => <li key={id}><span>{id}</span> <span class="mono fingerprint">{fingerprint(id) ?? 'fingerprint not read yet'}</span></li>)}
          </ul>
          <div class="row-actions">
            <button type="button" class={asking === 'accept' ? 'primary' : 'danger'} disabled={busy} onClick={() => { setAsking(null); onRun(asking) }}>Yes, {asking} {n}</button>
            <button type="button" onClick={() => setAsking(null)}>Cancel</button>
          </div>
        </div>
      ) : (
        <div class="row-actions">
          <span>{n} selected</span>
          {can('accept', 'key:*') ? <button type="button" class="primary" disabled={busy} onClick={() => setAsking('accept')}>Accept selected</button> : null}
          {can('reject', 'key:*') ? <button type="button" class="danger" disabled={busy} onClick={() => setAsking('reject')}>Reject selected</button> : null}
        </div>
      )}
    </section>
  )
}

/** The keys page at `/keys`. */
export function Keys({ query }: PageProps) {
  const q = query.get('q') ?? ''
  const set = useQueryNav('/keys', query)
  const r = useGet<KeyLists>('/api/keys')
  // A Source column only when a key was seen through a master other than `default` (own properties only: ids are data).
  const several = !!r.data && Object.values(r.data.sources).some((list) => list.some((n) => n !== 'default'))
  const masters = several ? (id: string) => (Object.hasOwn(r.data!.sources, id) ? r.data!.sources[id]! : []) : null
  const act = useAction()
  const [done, setDone] = useState('')
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const call = (id: string, a: Act) => api(a === 'delete' ? 'DELETE' : 'POST', a === 'delete' ? `/api/keys/${encodeURIComponent(id)}` : `/api/keys/${encodeURIComponent(id)}/${a}`)
  const onAct = (id: string, a: Act) => {
    setDone('')
    void act.run(async () => {
      await call(id, a)
      setDone(`Key of ${id} ${DONE[a]}.`)
    }).then(() => r.reload())
  }
  const onSelect = (ids: string[], on: boolean) => setSelected((cur) => {
    const next = new Set(cur)
    for (const id of ids) on ? next.add(id) : next.delete(id)
    return next
  })
  // Still pending: a key another operator (or salt) moved meanwhile drops out of the selection.
  const chosen = r.data ? r.data.pending.filter((id) => selected.has(id)) : []
  /** One key after the other through the per-key route (each audited as the operator's act); stops at the first refusal. */
  const onBulk = (a: 'accept' | 'reject') => {
    setDone('')
    const ids = chosen
    const finished: string[] = []
    void act.run(async () => {
      try {
        for (const id of ids) {
          await call(id, a)
          finished.push(id)
        }
      } finally {
        if (finished.length) setDone(`${finished.length} key${finished.length === 1 ? '' : 's'} ${DONE[a]}: ${finished.join(', ')}.`)
        onSelect(finished, false)
      }
    }).then(() => r.reload())
  }
  return (
    <Page title="Keys">
      <div class="toolbar">
        <SearchBox id="key-q" label="Filter keys" value={q} onCommit={(v, replace) => set({ q: v }, replace)} placeholder="minion id contains…" maxLength={255} />
      </div>
      <FingerHint />
      <ErrorBox error={act.error} />
      <p role="status" class="ok">{done}</p>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      {r.data ? <BulkBar ids={chosen} fingerprint={(id) => fingerprintOf(r.data!, id)} busy={act.busy} onRun={onBulk} /> : null}
      {r.data ? STATES.map(([s, title]) => (
        <KeyList key={s} state={s} title={title} ids={r.data![s]} fingerprint={(id) => fingerprintOf(r.data!, id)} masters={masters} filter={q} busy={act.busy} onAct={onAct}
          {...(s === 'pending' ? { selected, onSelect } : {})} />
      )) : null}
    </Page>
  )
}
