/** The job list (function and user filters, paging) and, for those who may execute, the Run command form. */
import { Ago } from '../../lib/when'
import { qs } from '../../lib/api'
import { jobFunLabel, jobOutcome, type Job, type JobList } from '../../lib/fleet'
import { useQueryNav } from '../../lib/filters'
import { useEffect, useState } from 'preact/hooks'
import { useGet } from '../../lib/hooks'
import { useActivityReload } from '../../lib/live'
import type { PageProps } from '../../lib/pages'
import { flagParam, intParam } from '../../lib/query'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Form, Loading, Page, Pager, Table, type Column } from '../../lib/ui'
import { RunCommand } from './run-command'
import { RunRunner } from './run-runner'
import { ExportCsv } from '../../lib/export-link'

const LIMIT = 50

/** The link to one job's page. */
export function jobHref(jid: string) {
  return href(`/jobs/${encodeURIComponent(jid)}`)
}

const columns: Column<Job>[] = [
  { label: 'Job id', cell: (j) => <a href={jobHref(j.jid)}>{j.jid}</a>, class: 'mono' },
  { label: 'Function', cell: (j) => jobFunLabel(j), class: 'mono' },
  { label: 'Target', cell: (j) => j.target ?? '—' },
  {
    label: 'Initiator',
    cell: (j) => <>{j.initiator ?? j.user ?? '—'}{j.internal ? <> <Badge tone="muted">internal</Badge></> : null}</>,
  },
  { label: 'Started', cell: (j) => <Ago ts={j.started_at} /> },
  {
    label: 'Outcome',
    cell: (j) => (
      <span class="badges">
        {jobOutcome(j)}
        {j.status === 'killed' || j.killed_at || j.killed_by ? <Badge tone="warn">killed</Badge> : j.running ? <Badge tone="info">running</Badge> : null}
      </span>
    ),
  },
]

/** The salt source a job came through, a link to that source's jobs. */
const sourceColumn: Column<Job> = { label: 'Source', cell: (j) => <a href={href(`/jobs?source=${encodeURIComponent(j.source)}`)}>{j.source}</a> }

/** With several masters (a job beyond `default` on the page, or a source filter) the list gains its Source column. */
const withSources = (rows: Job[] | undefined, filtered: boolean) =>
  filtered || rows?.some((j) => j.source !== 'default') ? [...columns.slice(0, 3), sourceColumn, ...columns.slice(3)] : columns

/** Exact-match filters on function and user, applied together with the Search button. */
function JobFilter({ fun, user, onApply }: { fun: string; user: string; onApply: (fun: string, user: string) => void }) {
  const [f, setF] = useState(fun)
  const [u, setU] = useState(user)
  useEffect(() => { setF(fun); setU(user) }, [fun, user])
  return (
    <Form class="toolbar" label="Filter jobs" onSubmit={() => onApply(f.trim(), u.trim())}>
      <Field id="job-fun" label="Filter by function" hint="exact name">
        <input id="job-fun" value={f} maxLength={255} placeholder="state.apply" aria-describedby="job-fun-hint" onInput={(e) => setF(e.currentTarget.value)} />
      </Field>
      <Field id="job-user" label="Filter by user" hint="exact name">
        <input id="job-user" value={u} maxLength={255} aria-describedby="job-user-hint" onInput={(e) => setU(e.currentTarget.value)} />
      </Field>
      <button type="submit">Search</button>
    </Form>
  )
}

/** The jobs page at `/jobs`. */
export function Jobs({ query }: PageProps) {
  const { canSome } = useSession()
  const fun = query.get('fun') ?? ''
  const user = query.get('user') ?? ''
  const internal = flagParam(query, 'internal')
  const offset = intParam(query, 'offset', 0)
  const set = useQueryNav('/jobs', query)
  const source = query.get('source') ?? ''
  const r = useGet<JobList>(`/api/jobs${qs({ fun, user, source: source || undefined, include_internal: internal ? 'true' : undefined, limit: LIMIT, offset })}`)
  // A job shows the moment salt publishes it: each job.new on the activity stream reloads the first page.
  useActivityReload(offset === 0 ? { event_type: 'job.new' } : null, r.reload)
  return (
    <Page title="Jobs">
      {/* Any execute grant on salt functions, scoped or not (contract §14): the form then says what it allows. */}
      {canSome('execute', 'salt') ? <RunCommand /> : null}
      {canSome('execute', 'runner') ? <RunRunner /> : null}
      <JobFilter fun={fun} user={user} onApply={(f, u) => set({ fun: f, user: u })} />
      <label class="check">
        <input type="checkbox" checked={internal} onChange={(e) => set({ internal: e.currentTarget.checked ? '1' : undefined })} />
        Show internal jobs <span class="muted small">(grains, inventory and presence calls Saltdeck makes for itself)</span>
      </label>
      <p><ExportCsv path="/api/jobs" filters={{ fun, user, include_internal: internal ? 'true' : undefined }} /></p>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      <div class="wide stack"><Table rows={r.data?.jobs} columns={withSources(r.data?.jobs, !!source)} rowKey={(j) => j.jid} caption={source ? `Jobs of salt source ${source}` : 'Jobs'} empty="No jobs match." /></div>
      <Pager total={r.data?.total} limit={LIMIT} offset={offset} onChange={(o) => set({ offset: o })} />
    </Page>
  )
}
