/**
 * One job: what ran where and who asked; each minion's return — for state jobs the per-state table of its run, the raw
 * return one click away; otherwise JSON text (cut, with "show all") — and Kill while the job is running, for those who may.
 */
import { When } from '../../lib/when'
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { count, dateTime } from '../../lib/format'
import { clip, isStateFun, skippedSentence, jobArgs, jobFunLabel, jobOutcome, prettyJson, runCountsText, runTone, type JobDetail, type KillStarted, type RunDetail } from '../../lib/fleet'
import { useAction, useGet } from '../../lib/hooks'
import { useActivityReload } from '../../lib/live'
import type { PageProps } from '../../lib/pages'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import { runHref } from './run'
import { DryRun, RunBody } from './run-states'

/** Characters of a return shown before "Show all": enough for a state summary, small enough for 1,000 minions. */
const CLIP = 2000
/** Returns rendered at once; more behind a button, so a 10,000-minion job does not build 10,000 <pre> blocks. */
const BATCH = 100
/** State returns rendered at once: each fetches its run's detail, so fewer than plain returns. */
const STATE_BATCH = 20

type Ret = JobDetail['returns'][number]

/** How the job page says each status: a killed job says so, never "finished". */
const STATUS_TEXT: Record<NonNullable<JobDetail['status']>, string> = { running: 'waiting for returns', finished: 'finished', killed: 'killed' }

/** The heading of one minion's return: its id, outcome, retcode and when. */
function ReturnHead({ r, canMinions }: { r: Ret; canMinions: boolean }) {
  return (
    <h3>
      {canMinions ? <a href={href(`/minions/${encodeURIComponent(r.minion_id)}`)}>{r.minion_id}</a> : r.minion_id}{' '}
      <Badge tone={r.success === false ? 'bad' : r.success ? 'ok' : 'muted'}>{r.success === false ? 'failed' : r.success ? 'succeeded' : 'unknown'}</Badge>
      {r.retcode !== null ? <span class="muted small"> retcode {r.retcode}</span> : null}
      <span class="muted small"> · <When ts={r.received_at} /></span>
    </h3>
  )
}

/** A return as JSON text, cut to CLIP characters until asked. */
function RawReturn({ r, n }: { r: Ret; n: number }) {
  const [all, setAll] = useState(false)
  const text = prettyJson(r.return)
  const c = clip(text, CLIP)
  const id = `ret-${n}`
  return (
    <>
      <pre id={id}>{all ? text : c.text}{!all && c.hidden ? '\n…' : ''}</pre>
      {c.hidden ? (
        <button type="button" class="link" aria-controls={id} aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all (${count(c.hidden)} more characters)`}
        </button>
      ) : null}
    </>
  )
}

/** One minion's return of a plain job. */
function Return({ r, n, canMinions }: { r: Ret; n: number; canMinions: boolean }) {
  return (
    <li class="return">
      <ReturnHead r={r} canMinions={canMinions} />
      <RawReturn r={r} n={n} />
    </li>
  )
}

/**
 * One minion's return of a state job: the states of the run Saltdeck stored from it, the raw return behind a
 * <details>. Until the run is stored (or when the return holds no states) the raw return shows instead.
 */
function StateReturn({ r, n, jid, failedOnly }: { r: Ret; n: number; jid: string; failedOnly: boolean }) {
  const run = useGet<RunDetail>(`/api/minions/${encodeURIComponent(r.minion_id)}/runs/${encodeURIComponent(jid)}`)
  const d = run.data
  const missing = run.error && 'status' in run.error && run.error.status === 404
  return (
    <li class="return">
      <ReturnHead r={r} canMinions />
      {d ? (
        <>
          <p class="run-head">
            <Badge tone={runTone(d.status)}>{d.status}</Badge> <DryRun test={d.test} /> <span class="run-counts">{runCountsText(d)}</span>{' '}
            <a href={runHref(r.minion_id, jid)}>Run page</a>
          </p>
          <RunBody run={d} failedOnly={failedOnly} caption={`States of ${r.minion_id}`} />
          <details class="raw">
            <summary>Raw return</summary>
            <RawReturn r={r} n={n} />
          </details>
        </>
      ) : (
        <>
          {missing ? <p class="muted">No state run is recorded for this return yet.</p> : <ErrorBox error={run.error} />}
          <Loading when={run.loading && !d} />
          {run.error ? <RawReturn r={r} n={n} /> : null}
        </>
      )}
    </li>
  )
}

type Child = NonNullable<JobDetail['children']>[number]

/** The columns of an orchestration's child jobs: the step, its job and what came of it. */
const childColumns: Column<Child>[] = [
  { label: 'Step', cell: (c) => c.step ?? '—' },
  { label: 'Job id', cell: (c) => <a href={href(`/jobs/${encodeURIComponent(c.jid)}`)}>{c.jid}</a>, class: 'mono' },
  { label: 'Function', cell: (c) => (c.job ? jobFunLabel(c.job) : '—'), class: 'mono' },
  { label: 'Target', cell: (c) => c.job?.target ?? '—' },
  {
    label: 'Outcome',
    cell: (c) => c.job ? (
      <span class="badges">
        {jobOutcome(c.job)}
        {c.job.status === 'killed' ? <Badge tone="warn">killed</Badge> : c.job.running ? <Badge tone="info">running</Badge> : (c.job.failed ?? 0) > 0 ? <Badge tone="bad">failed</Badge> : null}
      </span>
    ) : <span class="muted">not reported yet</span>,
  },
]

/** The job page at `/jobs/:jid`. */
export function JobPage({ params }: PageProps) {
  const jid = params.jid!
  const { can, me } = useSession()
  const r = useGet<JobDetail>(`/api/jobs/${encodeURIComponent(jid)}`)
  const [shown, setShown] = useState<number | null>(null)
  const [killed, setKilled] = useState<string | null>(null)
  const kill = useAction()
  const [tries, setTries] = useState(0)
  // A job just started from the Run form may not be indexed yet: look again a few times before giving up.
  const notYet = r.error && 'status' in r.error && r.error.status === 404 && tries < 5
  useEffect(() => {
    if (!notYet) return
    const t = setTimeout(() => { setTries((n) => n + 1); r.reload() }, 1500)
    return () => clearTimeout(t)
  }, [notYet, r.error])
  // Returns follow as they arrive: the activity stream of this job (its job.new and each job.ret) reloads the record.
  const live = useActivityReload({ jid }, r.reload)
  const j = r.data
  const doKill = () => kill.run(async () => {
    const out = await api<KillStarted>('POST', `/api/jobs/${encodeURIComponent(jid)}/kill`, {})
    setKilled(`Kill sent to ${out.minions.length} minion${out.minions.length === 1 ? '' : 's'}${out.kill_jid ? ` (job ${out.kill_jid})` : ''}. ${skippedSentence(out.skipped_sources)}`.trim())
    // The job record now says who killed it (and, once the minions answer, that it no longer runs).
    r.reload()
  })
  const returned = new Set(j?.returns.map((x) => x.minion_id))
  const missing = j?.minions ? j.minions.filter((m) => !returned.has(m)) : []
  const args = j ? jobArgs(j) : { positional: null, keyword: null }
  const [failedOnly, setFailedOnly] = useState(false)
  // Older servers do not say whether a job still runs: Kill stays offered then.
  const running = j ? (j.running ?? true) : false
  const states = !!j && isStateFun(j.fun) && can('view', 'minion:*')
  const batch = states ? STATE_BATCH : BATCH
  const limit = shown ?? batch
  return (
    <Page title={`Job ${jid}`} actions={j && running && (can('kill', `job:${jid}`) || j.initiator === me?.username) ? <ConfirmButton label="Kill" question={`Kill job ${jid} on its minions?`} busy={kill.busy} onConfirm={doKill} /> : null}>
      <p><a href={href('/jobs')}>All jobs</a></p>
      <ErrorBox error={kill.error} />
      {killed ? <p role="status" class="ok">{killed}</p> : null}
      {notYet ? <p role="status" class="muted">Waiting for salt to report this job…</p> : <ErrorBox error={r.error} />}
      <Loading when={r.loading && !j} />
      {j ? (
        <>
          {j.killed_at || j.killed_by ? (
            <p class="notice killed"><Badge tone="warn">killed</Badge> Killed{j.killed_by ? ` by ${j.killed_by}` : ''}{j.killed_at ? ` at ${dateTime(j.killed_at)}` : ''}.</p>
          ) : null}
          <Panel id="job-h" title="Job">
            <dl class="facts">
              <dt>Job id</dt><dd class="mono">{j.jid}</dd>
              <dt>Function</dt><dd class="mono">{jobFunLabel(j)}</dd>
              <dt>Target</dt><dd>{j.target ?? '—'} {j.tgt_type ? <span class="muted">({j.tgt_type})</span> : null}</dd>
              <dt>Initiator</dt><dd>{j.initiator ?? j.user ?? '—'}{j.internal ? <> <Badge tone="muted">internal</Badge></> : null}</dd>
              <dt>Salt user</dt><dd>{j.user ?? '—'}</dd>
              <dt>Started</dt><dd><When ts={j.started_at} /></dd>
              {j.running !== undefined ? (
                <>
                  <dt>State</dt>
                  <dd class="job-state">{STATUS_TEXT[j.status ?? (j.running ? 'running' : 'finished')]}{j.running && live === 'live' ? <span class="muted small"> · returns shown as they arrive</span> : null}</dd>
                </>
              ) : null}
              <dt>Outcome</dt><dd>{jobOutcome({ returned: j.returns.length, minions: j.minions, failed: j.failed ?? j.returns.filter((x) => x.success === false).length })}</dd>
              <dt>Arguments</dt><dd>{args.positional ? <pre>{clip(prettyJson(args.positional), CLIP).text}</pre> : 'none'}</dd>
              <dt>Keyword arguments</dt><dd>{args.keyword ? <pre>{clip(args.keyword.join('\n'), CLIP).text}</pre> : 'none'}</dd>
            </dl>
            {missing.length ? (
              <details>
                <summary>{count(missing.length)} minion{missing.length === 1 ? ' has' : 's have'} not returned</summary>
                <p class="mono">{missing.slice(0, 1000).join(', ')}{missing.length > 1000 ? ' …' : ''}</p>
              </details>
            ) : null}
          </Panel>
          {j.children?.length ? (
            <Panel id="children-h" title="Child jobs">
              <p class="muted small">The jobs this runner published (an orchestration's steps), as its return names them.</p>
              <div class="wide"><Table rows={j.children} columns={childColumns} rowKey={(c) => c.jid} caption="Child jobs" /></div>
            </Panel>
          ) : null}
          <Panel id="rets-h" title="Returns">
            {states && j.returns.length ? (
              <label class="check">
                <input type="checkbox" checked={failedOnly} onChange={(e) => setFailedOnly(e.currentTarget.checked)} />
                Failed states only
              </label>
            ) : null}
            {j.returns.length ? (
              <ul class="returns">
                {j.returns.slice(0, limit).map((x, i) => (states
                  ? <StateReturn key={x.minion_id} r={x} n={i} jid={j.jid} failedOnly={failedOnly} />
                  : <Return key={x.minion_id} r={x} n={i} canMinions={can('view', 'minion:*')} />))}
              </ul>
            ) : <p class="muted">No minion has returned yet.</p>}
            {j.returns.length > limit ? (
              <button type="button" onClick={() => setShown(limit + batch)}>Show more returns ({count(j.returns.length - limit)} left)</button>
            ) : null}
          </Panel>
        </>
      ) : null}
    </Page>
  )
}
