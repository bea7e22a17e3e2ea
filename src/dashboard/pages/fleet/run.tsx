/** One state run of a minion (contract §13): its summary, its states in Salt's order, and a comparison with an earlier run. */
import { When } from '../../lib/when'
import { qs } from '../../lib/api'
import { ago, count } from '../../lib/format'
import { duration, outcomeWord, runCountsText, runTone, type Run, type RunDetail, type RunDiff } from '../../lib/fleet'
import { useQueryNav } from '../../lib/filters'
import { useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { flagParam, oneOf } from '../../lib/query'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import { DryRun, RunBody } from './run-states'

/** The link to one run's page. */
export function runHref(minionId: string, jid: string, query: Record<string, string> = {}) {
  return href(`/minions/${encodeURIComponent(minionId)}/runs/${encodeURIComponent(jid)}`, query)
}

const AGAINST = ['previous', 'last_good'] as const
const AGAINST_LABEL = { previous: 'the previous run', last_good: 'the last good run' } as const

type DiffRow = RunDiff['states'][number]
const diffColumns: Column<DiffRow>[] = [
  { label: 'ID', cell: (s) => s.id, class: 'mono' },
  { label: 'SLS', cell: (s) => s.sls || '—', class: 'mono' },
  { label: 'Before', cell: (s) => outcomeWord(s.before) },
  { label: 'After', cell: (s) => outcomeWord(s.after) },
  { label: 'Change', cell: (s) => `${outcomeWord(s.before)} → ${outcomeWord(s.after)}`, class: 'change' },
]

/** One side of a comparison: when, its status and mark, and a link to its page. */
function RunRef({ minionId, r, here }: { minionId: string; r: Run; here: boolean }) {
  return (
    <>
      {here ? 'this run' : <a href={runHref(minionId, r.jid)}>run {r.jid}</a>}{' '}
      <span class="muted">(<When ts={r.completed_at} />)</span> <Badge tone={runTone(r.status)}>{r.status}</Badge> <DryRun test={r.test} />
    </>
  )
}

/** The states whose outcome differs between this run and an earlier one. */
function Compare({ minionId, jid, against }: { minionId: string; jid: string; against: (typeof AGAINST)[number] }) {
  const r = useGet<RunDiff>(`/api/minions/${encodeURIComponent(minionId)}/runs/${encodeURIComponent(jid)}/diff${qs({ against })}`)
  const notFound = r.error && 'status' in r.error && r.error.status === 404
  const d = r.data
  return (
    <Panel id="diff-h" title={`Compared with ${AGAINST_LABEL[against]}`}>
      {notFound ? <p class="muted">There is no {against === 'last_good' ? 'earlier good run' : 'earlier run'} of this minion to compare with.</p> : <ErrorBox error={r.error} />}
      <Loading when={r.loading && !d} />
      {d && !notFound ? (
        <>
          <p>From <RunRef minionId={minionId} r={d.from} here={false} /> to <RunRef minionId={minionId} r={d.to} here={d.to.jid === jid} />.</p>
          {d.from.detail_pruned || d.to.detail_pruned ? <p class="muted">Only the counts of the {d.from.detail_pruned ? 'earlier' : 'this'} run are kept, so its states cannot be compared.</p> : null}
          {d.states.length ? (
            <Table rows={d.states} columns={diffColumns} rowKey={(s) => `${s.sls}\u0000${s.key}`} caption="Differing states" />
          ) : <p>No state's outcome differs.</p>}
        </>
      ) : null}
    </Panel>
  )
}

/** The run page at `/minions/:id/runs/:jid`. */
export function RunPage({ params, query }: PageProps) {
  const id = params.id!
  const jid = params.jid!
  const { can } = useSession()
  const path = `/minions/${encodeURIComponent(id)}/runs/${encodeURIComponent(jid)}`
  const set = useQueryNav(path, query)
  const failedOnly = flagParam(query, 'failed')
  const against = oneOf(query, 'compare', AGAINST, '')
  const r = useGet<RunDetail>(`/api/minions/${encodeURIComponent(id)}/runs/${encodeURIComponent(jid)}`)
  const run = r.data
  const failed = run?.states?.filter((s) => s.result === false).length ?? 0
  return (
    <Page title={`Run ${jid} on ${id}`}>
      <p class="crumbs">
        <a href={href(`/minions/${encodeURIComponent(id)}`)}>Minion {id}</a>
        {can('view', 'job:*') ? <> · <a href={href(`/jobs/${encodeURIComponent(jid)}`)}>Job {jid}</a></> : null}
      </p>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !run} />
      {run ? (
        <>
          <Panel id="run-h" title="Run">
            <p class="run-head">
              <Badge tone={runTone(run.status)}>{run.status}</Badge> <DryRun test={run.test} />{' '}
              <span class="run-counts">{runCountsText(run)}</span>
            </p>
            {run.test ? <p class="muted">A dry run (test=True): nothing was changed; “would change” is what a real run would have changed.</p> : null}
            <dl class="facts">
              <dt>Minion</dt><dd class="mono">{run.minion_id}</dd>
              <dt>Function</dt><dd class="mono">{run.fun}</dd>
              <dt>State files</dt><dd class="mono">{run.sls.length ? run.sls.join(', ') : '—'}</dd>
              <dt>Completed</dt><dd><When ts={run.completed_at} /> <span class="muted">({ago(run.completed_at)})</span></dd>
              <dt>Duration</dt><dd>{duration(run.duration_ms)}</dd>
              <dt>Job id</dt><dd class="mono">{run.jid}</dd>
            </dl>
            <nav class="toolbar top-gap" aria-label="Compare">
              <a class="button" href={href(path, { compare: 'previous', failed: failedOnly ? '1' : undefined })} aria-current={against === 'previous' ? 'true' : undefined}>Compare with previous</a>
              <a class="button" href={href(path, { compare: 'last_good', failed: failedOnly ? '1' : undefined })} aria-current={against === 'last_good' ? 'true' : undefined}>Compare with last good</a>
              {against ? <a href={href(path, { failed: failedOnly ? '1' : undefined })}>Hide comparison</a> : null}
            </nav>
          </Panel>
          {against ? <Compare minionId={id} jid={jid} against={against} /> : null}
          <Panel id="states-h" title="States">
            {run.states ? (
              <div class="toolbar">
                <label class="check">
                  <input type="checkbox" checked={failedOnly} onChange={(e) => set({ failed: e.currentTarget.checked ? '1' : undefined }, true)} />
                  Failed only
                </label>
                <span class="muted" role="status">{failedOnly ? `${count(failed)} of ${count(run.states.length)} states shown` : `${count(run.states.length)} states, ${count(failed)} failed`}</span>
              </div>
            ) : null}
            <RunBody run={run} failedOnly={failedOnly} caption="States" />
          </Panel>
        </>
      ) : null}
    </Page>
  )
}
