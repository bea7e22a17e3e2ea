/** The overview: fleet counts from the list endpoints' totals, fleet compliance, the activity heartbeat and the recent-events widget. */
import { When } from '../../lib/when'
import { qs } from '../../lib/api'
import { ago, count } from '../../lib/format'
import { useEffect, useState } from 'preact/hooks'
import { heartbeat, widenWindow, widgetActivityQuery, WIDGET_WINDOWS, type ActivityEvent, type ActivityList, type SaltHealth, type WidgetConfig } from '../../lib/fleet'
import { useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Loading, Page, Panel } from '../../lib/ui'
import { Compliance } from './compliance'
import { EventRow } from './event-row'
import { HEALTH_REFRESH_MS, SaltHealthPanel } from './salt-health'

type Total = { total: number }
/** How often the overview re-reads its counts and events, so a page left open stays current. */
const REFRESH_MS = 30_000

/** Why presence is not known, in a few words. */
const unknownWhy = (h: SaltHealth) =>
  h.salt_api.reachable === false ? 'salt-api does not answer' : h.master.presence_hold === 'down' ? 'the salt-master does not answer' : h.master.presence_hold === 'grace' ? 'minions reconnecting to the salt-master' : 'see Salt health'

/**
 * One count card: a number that links to the filtered list. Each card loads its own total (limit=1) so they come in
 * parallel. `unknown` (why presence is not known: salt-api or the salt-master does not answer) shows "?" rather than a
 * stale number.
 */
function CountCard({ label, status, tone, unknown }: { label: string; status: string; tone?: 'bad' | 'warn'; unknown?: string | null }) {
  const r = useGet<Total>(`/api/minions${qs({ status, limit: 1 })}`, REFRESH_MS)
  const n = r.data?.total
  return (
    <a class={`card card-link${tone && n && !unknown ? ` card-${tone}` : ''}`} href={href('/minions', { status })}>
      <span class="n">{r.error ? '!' : unknown ? '?' : n === undefined ? '…' : count(n)}</span>
      <span>{label}{unknown ? ` (unknown: ${unknown})` : ''}</span>
      {r.error ? <span class="sr-only">could not load: {r.error.message}</span> : null}
    </a>
  )
}

/** The firing alerts as a count card linking to the Alerts page. */
function AlertsCard() {
  const r = useGet<Total>(`/api/alerts${qs({ state: 'firing', limit: 1 })}`, REFRESH_MS)
  const n = r.data?.total
  return (
    <a class={`card card-link${n ? ' card-bad' : ''}`} href={href('/alerts')}>
      <span class="n">{r.error ? '!' : n === undefined ? '…' : count(n)}</span>
      <span>Alerts firing</span>
    </a>
  )
}

/** The last activity of any kind against the widget's heartbeat window. */
function Heartbeat({ minutes }: { minutes: number }) {
  const r = useGet<ActivityList>(`/api/activity${qs({ limit: 1 })}`, REFRESH_MS)
  if (r.error) return <ErrorBox error={r.error} />
  if (!r.data) return <p class="muted" role="status">Checking the last activity…</p>
  const last = r.data.events[0]
  const hb = heartbeat(last?.ts, minutes)
  return (
    <p class={`heartbeat ${hb.stale ? 'stale' : 'fresh'}`} role="status">
      <Badge tone={hb.stale ? 'warn' : 'ok'}>{hb.stale ? 'Quiet' : 'Active'}</Badge>{' '}
      {last ? <>Last activity {ago(last.ts)} <span class="muted">(<When ts={last.ts} />)</span></> : 'No activity recorded yet'}
      {hb.stale ? `: nothing in the last ${minutes} minutes.` : '.'}
    </p>
  )
}

/** The recent-events list as the widget settings shape it, widening its time bound only while it has too few events. */
function RecentEvents({ cfg }: { cfg: WidgetConfig }) {
  const q = widgetActivityQuery(cfg)
  const [step, setStep] = useState(0)
  const r = useGet<ActivityList>(q ? `/api/activity${qs({ ...q, since_minutes: WIDGET_WINDOWS[step] })}` : null, REFRESH_MS)
  const next = r.data && q ? widenWindow(step, r.data.events.length, Number(q.limit)) : null
  useEffect(() => {
    if (next !== null) setStep(next)
  }, [next])
  if (!q) return <p class="muted">The widget settings hide every category.</p>
  return (
    <>
      <ErrorBox error={r.error} />
      <Loading when={(r.loading && !r.data) || next !== null} />
      {r.data && next === null ? (
        r.data.events.length ? (
          <ul class="events">{r.data.events.map((e) => <EventRow key={e.id} e={e} />)}</ul>
        ) : <p class="muted">No recent events.</p>
      ) : null}
    </>
  )
}

/** The overview page at `/`. */
export function Overview() {
  const { can } = useSession()
  const cfg = useGet<WidgetConfig>('/api/activity/widget-config')
  const minions = can('view', 'minion:*')
  const anyEvents = minions || can('view', 'job:*') || can('view', 'key:*')
  const health = useGet<SaltHealth>(minions ? '/api/salt/health' : null, HEALTH_REFRESH_MS).data
  const unknown = health && !health.presence_known ? unknownWhy(health) : null
  return (
    <Page title="Overview">
      <SaltHealthPanel h={health} />
      {minions ? (
        <section aria-labelledby="ov-counts">
          <h2 id="ov-counts">Fleet</h2>
          <div class="cards">
            <CountCard label="Minions online" status="online" unknown={unknown} />
            <CountCard label="Minions offline" status="offline" tone="warn" unknown={unknown} />
            <CountCard label="Keys pending" status="pending" tone="warn" />
            <CountCard label="Runs failing" status="unhealthy" tone="bad" />
            {can('view', 'alert:*') ? <AlertsCard /> : null}
          </div>
        </section>
      ) : null}
      {minions ? <Compliance refreshMs={REFRESH_MS} /> : null}
      {anyEvents ? (
        <Panel id="ov-activity" title="Recent activity">
          <ErrorBox error={cfg.error} />
          {cfg.data ? (
            <>
              <Heartbeat minutes={cfg.data.widget_heartbeat_minutes} />
              <RecentEvents cfg={cfg.data} />
              <p><a href={href('/activity')}>All activity</a></p>
            </>
          ) : <Loading when={cfg.loading} />}
        </Panel>
      ) : null}
      {!minions && !anyEvents ? <p>Your roles give you no fleet views. Ask an administrator for access.</p> : null}
    </Page>
  )
}
