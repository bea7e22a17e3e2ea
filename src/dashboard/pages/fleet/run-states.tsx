/** A run's states as Salt's highstate outputter lists them: a table in run order, changes and long comments folded. */
import { count } from '../../lib/format'
import { duration, headLines, splitChanges, stateResult, type RunDetail, type StateRow } from '../../lib/fleet'
import { Badge, Table, type Column } from '../../lib/ui'

/** Lines of a comment or of changes shown before the rest is folded away. */
const HEAD_LINES = 8

/** Text in a <pre>: the first lines shown, the others behind a <details> that says how many there are. */
export function Folded({ text, label }: { text: string; label: string }) {
  const { head, rest } = headLines(text, HEAD_LINES)
  if (!rest) return <pre>{text}</pre>
  return (
    <div class="folded">
      <pre>{head}</pre>
      <details>
        <summary>{`${count(rest)} more line${rest === 1 ? '' : 's'} of ${label}`}</summary>
        <pre>{text.split('\n').slice(HEAD_LINES).join('\n')}</pre>
      </details>
    </div>
  )
}

/** A state's changes: a unified diff (file.managed's `diff`) in its own block, the rest as pretty JSON; "none" when empty. */
function Changes({ s }: { s: StateRow }) {
  const c = splitChanges(s.changes)
  if (!c) return <span class="muted">none</span>
  return (
    <>
      {c.diff !== null ? <Folded text={c.diff} label="diff" /> : null}
      {c.rest !== null ? <Folded text={c.rest} label="changes" /> : null}
    </>
  )
}

/** The result cell: symbol and word, so colour is never the only signal. */
export function ResultMark({ s, test }: { s: Pick<StateRow, 'result' | 'changed'>; test: boolean }) {
  const r = stateResult(s.result, test, s.changed)
  return <span class={`result ${r.tone}`}><span aria-hidden="true">{r.symbol}</span> {r.word}</span>
}

const columns = (test: boolean): Column<StateRow>[] => [
  { label: 'Result', cell: (s) => <ResultMark s={s} test={test} />, class: 'nowrap' },
  { label: 'ID', cell: (s) => s.id, class: 'mono state-id' },
  { label: 'Function', cell: (s) => s.function, class: 'mono' },
  { label: 'Name', cell: (s) => s.name, class: 'mono state-name' },
  { label: 'SLS', cell: (s) => s.sls || '—', class: 'mono state-sls' },
  { label: 'Comment', cell: (s) => (s.comment ? (s.comment.includes('\n') ? <Folded text={s.comment} label="comment" /> : s.comment) : '—'), class: 'comment' },
  { label: 'Duration', cell: (s) => duration(s.duration_ms), class: 'num nowrap' },
  { label: test ? 'Would change' : 'Changes', cell: (s) => <Changes s={s} />, class: 'changes' },
]

/** The states of one run in Salt's order, all or only the failed ones. */
export function StateTable({ states, test, failedOnly, caption }: { states: StateRow[]; test: boolean; failedOnly: boolean; caption: string }) {
  const rows = [...states].sort((a, b) => a.order - b.order)
  const shown = failedOnly ? rows.filter((s) => s.result === false) : rows
  return (
    <div class="wide states stack">
      <Table rows={shown} columns={columns(test)} rowKey={(s) => s.key} caption={caption} empty={failedOnly ? 'No state failed.' : 'The run has no states.'} />
    </div>
  )
}

/** What a run's detail holds: its states, its render errors, or a note that only the counts are kept. */
export function RunBody({ run, failedOnly, caption }: { run: RunDetail; failedOnly: boolean; caption: string }) {
  return (
    <>
      {run.errors?.length ? (
        <div class="render-errors">
          <h3>Errors returned instead of states</h3>
          <p class="muted small">A render or compile error, or a refusal such as another state run in progress.</p>
          <ul>{run.errors.map((e, i) => <li key={i}><pre>{e}</pre></li>)}</ul>
        </div>
      ) : null}
      {run.states ? <StateTable states={run.states} test={run.test} failedOnly={failedOnly} caption={caption} /> : null}
      {run.detail_pruned ? <p class="muted">Only the counts of this run are kept: its state detail was pruned (Saltdeck keeps it for a minion's newest runs).</p> : null}
      {!run.states && !run.errors?.length && !run.detail_pruned ? <p class="muted">This run has no state detail.</p> : null}
    </>
  )
}

/** The "dry run" mark. */
export function DryRun({ test }: { test: boolean | undefined }) {
  return test ? <Badge tone="info">dry run</Badge> : null
}
