/** The overview's fleet compliance panel: minions by last real run over up to 30 days, and the states failing on most minions. */
import { Ago } from '../../lib/when'
import { qs } from '../../lib/api'
import { count } from '../../lib/format'
import { noFailingStateText, trendBars, trendSummary, TREND_STATUSES, type FailingState, type FailingStates, type MinionList, type Trend } from '../../lib/fleet'
import { useGet } from '../../lib/hooks'
import { dayTicks, minionTicks, sinceFirstRun } from '../../lib/trend-axis'
import { href } from '../../lib/router'
import { ErrorBox, Loading, Panel } from '../../lib/ui'

const DAYS = 30
const TOP = 5
const W = 600
const H = 120
const LABEL = { healthy: 'healthy', changed: 'changed', unhealthy: 'unhealthy', blocked: 'blocked', never: 'never run' } as const

/**
 * The trend as stacked daily bars in an inline SVG (colours by class) as wide as the panel, from the first day with a
 * run, with a minions axis and day labels; its summary is the accessible name. The days are UTC days, and it says so.
 */
function TrendChart({ t: whole }: { t: Trend }) {
  const t = sinceFirstRun(whole)
  const last = t.points[t.points.length - 1]
  if (!last) return <p class="muted">No run history yet.</p>
  const ticks = minionTicks(t)
  const top = ticks[ticks.length - 1]!
  return (
    <figure class="trend">
      <div class="trend-plot">
        <div class="trend-y" aria-hidden="true">{[...ticks].reverse().map((v) => <span key={v}>{count(v)}</span>)}</div>
        <svg class="trend-svg" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={trendSummary(t)} preserveAspectRatio="none">
          <rect class="trend-frame" x="0" y="0" width={W} height={H} />
          {trendBars(t, W, H).map((b) => (
            <rect key={`${b.day}-${b.status}`} class={`trend-${b.status}`} x={b.x} y={b.y} width={b.w} height={b.h}>
              <title>{`${b.day}: ${LABEL[b.status]}`}</title>
            </rect>
          ))}
          {ticks.map((v) => <line key={v} class="trend-grid" x1="0" x2={W} y1={H - (v / top) * H} y2={H - (v / top) * H} vector-effect="non-scaling-stroke" />)}
        </svg>
        <span />
        <div class="trend-x" aria-hidden="true">{dayTicks(t).map((d) => <span key={d}>{d}</span>)}</div>
      </div>
      <figcaption>
        <span class="muted">Minions by their last real run at the end of each day (UTC days), {t.points[0]!.day} to {last.day}; on {last.day}:</span>
        <ul class="legend">
          {[...TREND_STATUSES].reverse().map((s) => (
            <li key={s}><span class={`swatch trend-${s}`} aria-hidden="true" />{count(last[s])} {LABEL[s]}</li>
          ))}
        </ul>
      </figcaption>
    </figure>
  )
}

/** The overview panel; shown to those who may view minions. */
export function Compliance({ refreshMs }: { refreshMs: number }) {
  const trend = useGet<Trend>(`/api/runs/trend${qs({ days: DAYS })}`, refreshMs)
  const failing = useGet<FailingStates>(`/api/runs/failing-states${qs({ limit: TOP })}`, refreshMs)
  const unhealthy = href('/minions', { status: 'unhealthy' })
  // The same count as the overview's "Runs failing" card, so an empty list can say why that card is not 0.
  const failingRuns = useGet<MinionList>(`/api/minions${qs({ status: 'unhealthy', limit: 1 })}`, refreshMs)
  return (
    <Panel id="ov-compliance" title="Fleet compliance">
      <h3>Last {DAYS} days, from the first run</h3>
      <ErrorBox error={trend.error} />
      <Loading when={trend.loading && !trend.data} />
      {trend.data ? <TrendChart t={trend.data} /> : null}
      <h3>Failing states</h3>
      <ErrorBox error={failing.error} />
      <Loading when={failing.loading && !failing.data} />
      {failing.data ? (
        failing.data.items.length ? (
          <ol class="failing">
            {failing.data.items.map((f) => (
              <li key={`${f.sls}\u0000${f.id}\u0000${f.function}`}>
                <a href={unhealthy}><span class="mono">{f.id}</span></a>{' '}
                <span class="muted mono">{f.function}{f.sls ? ` in ${f.sls}` : ''}</span>{' '}
                — failing on {count(f.minion_count)} minion{f.minion_count === 1 ? '' : 's'},{' '}
                last <Ago ts={f.last_failed_at} />
                {f.sample_comment ? <div class="muted small sample">{f.sample_comment}</div> : null}
              </li>
            ))}
          </ol>
        ) : <p class="muted">{noFailingStateText(failingRuns.data?.total)}{failingRuns.data?.total ? <> <a href={unhealthy}>Show them</a></> : null}</p>
      ) : null}
    </Panel>
  )
}
