/** The Salt health page (Fleet → Salt health) and the overview's panel that shows only when something is wrong. */
import { Ago } from '../../lib/when'
import { ago, count } from '../../lib/format'
import { interval } from '../../lib/duration'
import type { Cluster, SaltHealth } from '../../lib/fleet'
import { useContext } from 'preact/hooks'
import { holds, SessionContext } from '../../lib/session'
import { useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { Badge, ErrorBox, Loading, Page, Panel, Table } from '../../lib/ui'

/** How often health is read again while shown. */
export const HEALTH_REFRESH_MS = 15_000

const STREAM_TONE = { connected: 'ok', reconnecting: 'warn', broken: 'bad', disabled: 'muted' } as const

/** A time as "3 minutes ago" with the full date on hover; "never" when absent. */
const When = ({ ts }: { ts: string | null }) => ts ? <Ago ts={ts} /> : <span class="muted">never</span>

/** A problem's sentence, its "under Settings" a link to the Settings page. */
function ProblemText({ text }: { text: string }) {
  const at = text.indexOf('under Settings')
  if (at < 0) return <>{text}</>
  const end = at + 'under Settings'.length
  return <>{text.slice(0, at)}under <a href={href('/settings')}>Settings</a>{text.slice(end)}</>
}

/** The problems as a list. */
function Problems({ h }: { h: SaltHealth }) {
  return h.problems.length ? <ul class="problems">{h.problems.map((p) => <li><ProblemText text={p} /></li>)}</ul> : <p><Badge tone="ok">No problems</Badge> salt-api, the salt-master, the event stream, the pollers and the database are working.</p>
}

/** Whether the salt-master answers through salt-api (a wheel call with a deadline, every check_interval_seconds). */
function MasterState({ h }: { h: SaltHealth }) {
  const m = h.master
  const how = m.check_interval_seconds ? <span class="muted"> — checked every {interval(m.check_interval_seconds)}</span> : null
  if (m.reachable == null) return <><Badge tone="muted">unknown</Badge>{h.salt_api.reachable === false ? ' (salt-api does not answer)' : ''}{how}</>
  if (!m.reachable) return <><Badge tone="bad">does not answer</Badge> since <When ts={m.since} />{m.error ? <> ({m.error})</> : null}{how}</>
  return <><Badge tone="ok">answers</Badge>{m.since ? <> since <When ts={m.since} /></> : null}{how}</>
}

/** A leadership's name as read: a salt source by its name, fleet-wide work in words. */
const leadName = (name: string) => (name === '(fleet)' ? 'fleet-wide work' : `source ${name}`)

/** The running Saltdeck instances on this database and what each leads (contract §15), for holders of view setting:*. */
function InstancesPanel() {
  const { me } = useContext(SessionContext)
  const allowed = holds(me, 'view', 'setting:*')
  const r = useGet<Cluster>(allowed ? '/api/cluster' : null, HEALTH_REFRESH_MS)
  if (!allowed) return null
  return (
    <Panel id="sh-instances" title="Saltdeck instances">
      <ErrorBox error={r.error} />
      {r.data ? (
        <Table rows={r.data.instances} rowKey={(i) => i.id} caption="Saltdeck instances on this database and what each leads" empty="No instance has reported yet." columns={[
          { label: 'Host', cell: (i) => <strong>{i.hostname}</strong> },
          { label: 'Instance', cell: (i) => <code>{i.id.slice(-12)}</code> },
          { label: 'Version', cell: (i) => i.version },
          { label: 'Database', cell: (i) => (i.engine === 'postgres' ? 'PostgreSQL' : 'SQLite') },
          { label: 'Leads', cell: (i) => (i.leads.length ? i.leads.map((l) => <><Badge tone="ok">{leadName(l)}</Badge> </>) : <span class="muted">nothing (standby)</span>) },
          { label: 'Started', cell: (i) => <When ts={i.started_at} /> },
          { label: 'Last seen', cell: (i) => <When ts={i.last_seen_at} /> },
        ]} />
      ) : null}
    </Panel>
  )
}

/** Which instance leads the salt source, and so whose event stream and pollers the page shows (contract §15). */
function LeaderLine({ leader }: { leader: SaltHealth['leader'] }) {
  if (!leader) return <><Badge tone="warn">no instance leads it now</Badge> (another takes over within 15 s)</>
  if (leader.here) return <>this instance</>
  const who = leader.hostname ? <>instance {leader.hostname} <span class="muted">({leader.instance_id})</span></> : 'another instance'
  return <>{who}: its stream and pollers as of <When ts={leader.reported_at} /></>
}

/** The overview's panel: the problems and a link to the page; nothing while all is well. */
export function SaltHealthPanel({ h }: { h: SaltHealth | undefined }) {
  if (!h || !h.problems.length) return null
  return (
    <Panel id="ov-salt-health" title="Salt health">
      <Problems h={h} />
      <p><a href={href('/salt-health')}>Salt health details</a></p>
    </Panel>
  )
}

/** The Salt health page. */
export function SaltHealthPage() {
  const r = useGet<SaltHealth>('/api/salt/health', HEALTH_REFRESH_MS)
  const h = r.data
  return (
    <Page title="Salt health" actions={<button type="button" onClick={r.reload}>Refresh</button>}>
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !h} />
      {h ? (
        <>
          <Panel id="sh-problems" title="Problems"><Problems h={h} /></Panel>
          <Panel id="sh-salt" title="Master and salt-api">
            <dl class="summary">
              <div><dt>salt-api</dt><dd>{h.salt_api.reachable === null ? <Badge tone="muted">not asked yet</Badge> : h.salt_api.reachable ? <Badge tone="ok">answers</Badge> : <Badge tone="bad">does not answer</Badge>}
                {h.salt_api.since ? <> since <When ts={h.salt_api.since} /></> : null}{h.salt_api.error ? <> ({h.salt_api.error})</> : null}</dd></div>
              <div><dt>salt-master</dt><dd><MasterState h={h} /></dd></div>
              <div><dt>Minion presence</dt><dd>{h.presence_known ? 'current' : <><Badge tone="warn">unknown</Badge>{h.master.presence_hold === 'grace' ? <> (minions reconnecting to the master: none goes offline before <When ts={h.master.grace_until} />)</> : h.master.presence_hold === 'down' ? ' (the master does not answer: nobody is marked offline)' : null}</>}</dd></div>
              <div><dt>Master Salt version</dt><dd>{h.master.version ?? <span class="muted">unknown</span>}</dd></div>
              <div><dt>Saltdeck's database</dt><dd>{h.database.writable ? 'takes writes' : <><Badge tone="bad">not writable</Badge> since <When ts={h.database.since} /> ({h.database.error})</>}</dd></div>
            </dl>
          </Panel>
          <Panel id="sh-stream" title="Event stream">
            <dl class="summary">
              <div><dt>Led by</dt><dd><LeaderLine leader={h.leader} /></dd></div>
              <div><dt>State</dt><dd><Badge tone={STREAM_TONE[h.event_stream.state]}>{h.event_stream.state}</Badge> since <When ts={h.event_stream.since} /></dd></div>
              <div><dt>Last event</dt><dd><When ts={h.event_stream.last_event_at} /></dd></div>
              <div><dt>Reconnects in the last hour</dt><dd>{count(h.event_stream.reconnects_last_hour)}</dd></div>
              <div><dt>Polling covers</dt><dd>{h.event_stream.polling_covers ? `yes: jobs and fleet every ${interval(h.event_stream.catch_up_interval_seconds)}` : 'no'}</dd></div>
              <div><dt>Last error</dt><dd>{h.event_stream.last_error ?? <span class="muted">none</span>}</dd></div>
            </dl>
          </Panel>
          <Panel id="sh-pollers" title="Pollers">
            <Table rows={h.pollers} rowKey={(p) => p.name} caption="Pollers: last success and lag" empty="No pollers run in this process." columns={[
              { label: 'Poller', cell: (p) => <strong>{p.name}</strong> },
              { label: 'Interval', cell: (p) => interval(p.interval_seconds) },
              { label: 'Last success', cell: (p) => <When ts={p.last_success_at} /> },
              { label: 'Lag', cell: (p) => p.lag_seconds === null ? '—' : <>{interval(p.lag_seconds)}{p.late ? <> <Badge tone="warn">late</Badge></> : null}</>, class: 'num' },
              { label: 'Last error', cell: (p) => p.last_error ? <span class="bad-text">{p.last_error}</span> : <span class="muted">none</span> },
            ]} />
          </Panel>
          <InstancesPanel />
          <Panel id="sh-versions" title="Minion Salt versions">
            <Table rows={h.minion_versions} rowKey={(v) => v.version ?? ''} caption="Accepted minions per Salt version" empty="No accepted minions yet." columns={[
              { label: 'Version', cell: (v) => v.version ?? <span class="muted">not reported yet</span> },
              { label: 'Minions', cell: (v) => count(v.minions), class: 'num' },
            ]} />
          </Panel>
          <Panel id="sh-faults" title="Known faults of this master's version">
            {h.master.version ? (
              <Table rows={h.known_faults} rowKey={(f) => f.id} caption="Known upstream faults and what Saltdeck does" empty={`Salt ${h.master.version} has no fault Saltdeck knows of.`} columns={[
                { label: 'Versions', cell: (f) => f.versions, class: 'nowrap' },
                { label: 'Fault', cell: (f) => <>{f.summary} <span class="muted">({f.issue})</span></> },
                { label: 'What Saltdeck does', cell: (f) => f.handling },
              ]} />
            ) : <p class="muted">The master's version is not known yet.</p>}
          </Panel>
        </>
      ) : null}
    </Page>
  )
}
