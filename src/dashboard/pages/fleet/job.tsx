/** One job: what ran where, each minion's return as JSON text (cut, with "show all"), and Kill for those who may. */
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { count, dateTime } from '../../lib/format'
import { clip, prettyJson, type JobDetail } from '../../lib/fleet'
import { useAction, useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Loading, Page, Panel } from '../../lib/ui'

/** Characters of a return shown before "Show all": enough for a state summary, small enough for 1,000 minions. */
const CLIP = 2000
/** Returns rendered at once; more behind a button, so a 10,000-minion job does not build 10,000 <pre> blocks. */
const BATCH = 100

type Ret = JobDetail['returns'][number]

/** One minion's return, cut to CLIP characters until asked. */
function Return({ r, n, canMinions }: { r: Ret; n: number; canMinions: boolean }) {
  const [all, setAll] = useState(false)
  const text = prettyJson(r.return)
  const c = clip(text, CLIP)
  const id = `ret-${n}`
  return (
    <li class="return">
      <h3>
        {canMinions ? <a href={href(`/minions/${encodeURIComponent(r.minion_id)}`)}>{r.minion_id}</a> : r.minion_id}{' '}
        <Badge tone={r.success === false ? 'bad' : r.success ? 'ok' : 'muted'}>{r.success === false ? 'failed' : r.success ? 'succeeded' : 'unknown'}</Badge>
        {r.retcode !== null ? <span class="muted small"> retcode {r.retcode}</span> : null}
        <span class="muted small"> · {dateTime(r.received_at)}</span>
      </h3>
      <pre id={id}>{all ? text : c.text}{!all && c.hidden ? '\n…' : ''}</pre>
      {c.hidden ? (
        <button type="button" class="link" aria-controls={id} aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all (${count(c.hidden)} more characters)`}
        </button>
      ) : null}
    </li>
  )
}

/** The job page at `/jobs/:jid`. */
export function JobPage({ params }: PageProps) {
  const jid = params.jid!
  const { can } = useSession()
  const r = useGet<JobDetail>(`/api/jobs/${encodeURIComponent(jid)}`)
  const [shown, setShown] = useState(BATCH)
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
  const j = r.data
  const doKill = () => kill.run(async () => {
    const out = await api<{ kill_jid: string | null; minions: string[] }>('POST', `/api/jobs/${encodeURIComponent(jid)}/kill`, {})
    setKilled(`Kill sent to ${out.minions.length} minion${out.minions.length === 1 ? '' : 's'}${out.kill_jid ? ` (job ${out.kill_jid})` : ''}.`)
  })
  const returned = new Set(j?.returns.map((x) => x.minion_id))
  const missing = j?.minions ? j.minions.filter((m) => !returned.has(m)) : []
  return (
    <Page title={`Job ${jid}`} actions={j && can('kill', 'job:*') ? <ConfirmButton label="Kill" question={`Kill job ${jid} on its minions?`} busy={kill.busy} onConfirm={doKill} /> : null}>
      <p><a href={href('/jobs')}>All jobs</a></p>
      <ErrorBox error={kill.error} />
      {killed ? <p role="status" class="ok">{killed}</p> : null}
      {notYet ? <p role="status" class="muted">Waiting for salt to report this job…</p> : <ErrorBox error={r.error} />}
      <Loading when={r.loading && !j} />
      {j ? (
        <>
          <Panel id="job-h" title="Job">
            <dl class="facts">
              <dt>Job id</dt><dd class="mono">{j.jid}</dd>
              <dt>Function</dt><dd class="mono">{j.fun ?? '—'}</dd>
              <dt>Target</dt><dd>{j.target ?? '—'} {j.tgt_type ? <span class="muted">({j.tgt_type})</span> : null}</dd>
              <dt>User</dt><dd>{j.user ?? '—'}</dd>
              <dt>Started</dt><dd>{dateTime(j.started_at)}</dd>
              <dt>Returned</dt><dd>{count(j.returns.length)}{j.minions ? ` of ${count(j.minions.length)} minions` : ''}</dd>
              <dt>Arguments</dt><dd>{j.arg === null || (Array.isArray(j.arg) && !j.arg.length) ? 'none' : <pre>{clip(prettyJson(j.arg), CLIP).text}</pre>}</dd>
            </dl>
            {missing.length ? (
              <details>
                <summary>{count(missing.length)} minion{missing.length === 1 ? ' has' : 's have'} not returned</summary>
                <p class="mono">{missing.slice(0, 1000).join(', ')}{missing.length > 1000 ? ' …' : ''}</p>
              </details>
            ) : null}
          </Panel>
          <Panel id="rets-h" title="Returns">
            {j.returns.length ? (
              <ul class="returns">{j.returns.slice(0, shown).map((x, i) => <Return key={x.minion_id} r={x} n={i} canMinions={can('view', 'minion:*')} />)}</ul>
            ) : <p class="muted">No minion has returned yet.</p>}
            {j.returns.length > shown ? (
              <button type="button" onClick={() => setShown(shown + BATCH)}>Show more returns ({count(j.returns.length - shown)} left)</button>
            ) : null}
          </Panel>
        </>
      ) : null}
    </Page>
  )
}
