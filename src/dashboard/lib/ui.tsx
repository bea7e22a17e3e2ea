/** Small building blocks every page uses: page frame, error box, table, pager, form field, badge. */
import type { ComponentChildren, FormHTMLAttributes } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { ApiError } from './api'
import { count } from './format'
import { installBidiGuard, showBidi } from './bidi'

// Every page builds on these blocks, so the guard is on before any page renders.
installBidiGuard()

/** A page with a heading that takes focus on arrival, so screen readers announce the new page. */
export function Page({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const h = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${showBidi(title)} · Saltdeck`
    h.current?.focus()
  }, [title])
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1} ref={h}>{title}</h1>
        {actions ? <div class="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  )
}

/** An error message in a live region; nothing when there is no error. */
export function ErrorBox({ error }: { error: Error | undefined | null }) {
  if (!error) return null
  // Status 0 is no answer at all: the sentence says so, a "(0)" would only puzzle.
  const status = error instanceof ApiError && error.status ? ` (${error.status})` : ''
  return <p class="error" role="alert">{error.message}{status}</p>
}

/** A quiet "loading" line for screen readers and eyes. */
export function Loading({ when }: { when: boolean }) {
  return when ? <p class="muted" role="status">Loading…</p> : null
}

/** A titled panel of a page: a section labelled by its heading. */
export function Panel({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  )
}

/** One column of a Table: header text and how to render a row's cell (as text or elements, never HTML). */
export interface Column<R> {
  label: string
  cell: (row: R) => ComponentChildren
  class?: string
  /** When set, the header is a sort button for this key. */
  sortKey?: string
}

/** A data table with an optional sortable header and an empty message. */
export function Table<R>({ rows, columns, rowKey, empty = 'Nothing to show.', sort, onSort, caption }: {
  rows: R[] | undefined
  columns: Column<R>[]
  rowKey: (row: R) => string | number
  empty?: string
  sort?: { key: string; dir: 'asc' | 'desc' }
  onSort?: (key: string) => void
  caption?: string
}) {
  return (
    <div class="table-wrap">
      {/* Busy until its rows arrive: the one blank row meanwhile is not an empty list. */}
      <table aria-busy={rows === undefined ? 'true' : undefined}>
        {caption ? <caption class="sr-only">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((c) => {
              const active = sort && c.sortKey === sort.key
              return (
                <th scope="col" class={c.class} aria-sort={active ? (sort!.dir === 'asc' ? 'ascending' : 'descending') : undefined}>
                  {c.sortKey && onSort ? (
                    <button type="button" class="link" onClick={() => onSort(c.sortKey!)}>
                      {c.label}{active ? (sort!.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                    </button>
                  ) : c.label}
                </th>
              )
            })}
          </tr>
        </thead>
        <tbody>
          {rows && rows.length ? rows.map((r) => (
            // data-label: a stacked table (class `stack`, narrow screens) names each cell with its column.
            <tr key={rowKey(r)}>{columns.map((c) => <td class={c.class} data-label={c.label}>{c.cell(r)}</td>)}</tr>
          )) : (
            <tr><td colSpan={columns.length} class="muted">{rows ? empty : ''}</td></tr>
          )}
        </tbody>
      </table>
    </div>
  )
}

/** Previous/next paging over a server-side list of `total` rows. */
export function Pager({ total, limit, offset, onChange }: { total: number | undefined; limit: number; offset: number; onChange: (offset: number) => void }) {
  if (total === undefined) return null
  const last = Math.min(offset + limit, total)
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset <= 0} onClick={() => onChange(Math.max(0, offset - limit))}>Previous</button>
      <span role="status">{total === 0 ? 'No rows' : `${count(offset + 1)}–${count(last)} of ${count(total)}`}</span>
      <button type="button" disabled={last >= total} onClick={() => onChange(offset + limit)}>Next</button>
    </nav>
  )
}

/** A labelled form control; the label is tied to the control by id. */
export function Field({ id, label, hint, children }: { id: string; label: string; hint?: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint ? <small id={`${id}-hint`} class="muted">{hint}</small> : null}
    </div>
  )
}

/** A coloured status word (the colour is never the only signal: the word is the text). */
export function Badge({ tone, children }: { tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted'; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>
}

/** A form that calls `onSubmit` without reloading the page. */
export function Form({ onSubmit, children, label, ...rest }: { onSubmit: () => void; children: ComponentChildren; label?: string } & Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit'>) {
  return (
    <form {...rest} aria-label={label} onSubmit={(e) => { e.preventDefault(); onSubmit() }}>
      {children}
    </form>
  )
}

/** The end of a form: its error, the submit button and a status line for "Saved."-style notes. */
export function FormFooter({ act, note, label = 'Save' }: { act: { busy: boolean; error?: Error | undefined }; note?: string; label?: string }) {
  return (
    <>
      <ErrorBox error={act.error} />
      <div class="form-actions">
        <button type="submit" class="primary" disabled={act.busy}>{label}</button>
        {note !== undefined && <span role="status" class="ok">{note}</span>}
      </div>
    </>
  )
}
