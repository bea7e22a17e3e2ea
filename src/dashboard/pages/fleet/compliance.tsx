/** The overview's fleet compliance panel: minions by last real run over 30 days, and the states failing on most minions. */
import { qs } from '../../lib/api'
import { ago, count, dateTime } from '../../lib/format'
import { noFailingStateText, trendBars, trendSummary, TREND_STATUSES, type FailingState, type Trend } from '../../lib/fleet'
import { useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { ErrorBox, Loading, Panel } from '../../lib/ui'

const DAYS = 30
const TOP = 5
const W = 300
const H = 64
const LABEL = { healthy: 'healthy', changed: 'changed', unhealthy: 'unhealthy', blocked: 'blocked', never: 'never run' } as const

/** The trend as stacked daily bars in an inline SVG (colours by class), its summary as the accessible name. */
function TrendChart({ t }: { t: Trend }) {
  const last = t.points[t.points.length - 1]
  return (
    <figure class="trend">
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={trendSummary(t)} preserveAspectRatio="none">
        <rect class="trend-frame" x="0" y="0" width={W} height={H} />
        {trendBars(t, W, H).map((b) => (
          <rect key={`${b.day}-${b.status}`} class={`trend-${b.status}`} x={b.x} y={b.y} width={b.w} height={b.h}>
            <title>{`${b.day}: ${LABEL[b.status]}`}</title>
          </rect>
        ))}
      </svg>
      <figcaption>
        {last ? (
          <>
            <span class="muted">{t.points[0]!.day} to {last.day}; on {last.day}:</span>
            <ul class="legend">
              {[...TREND_STATUSES].reverse().map((s) => (
                <li key={s}><span class={`swatch trend-${s}`} aria-hidden="true" />{count(last[s])} {LABEL[s]}</li>
              ))}
            </ul>
          </>
        ) : <span class="muted">No run history yet.</span>}
      </figcaption>
    </figure>
  )
}

/** The overview panel; shown to those who may view minions. */
export function Compliance({ refreshMs }: { refreshMs: number }) {
  const trend = useGet<Trend>(`/api/runs/trend${qs({ days: DAYS })}`, refreshMs)
  const failing = useGet<{ items: FailingState[] }>(`/api/runs/failing-states${qs({ limit: TOP })}`, refreshMs)
  const unhealthy = href('/minions', { status: 'unhealthy' })
  // The same count as the overview's "Runs failing" card, so an empty list can say why that card is not 0.
  const failingRuns = useGet<{ total: number }>(`/api/minions${qs({ status: 'unhealthy', limit: 1 })}`, refreshMs)
  return (
    <Panel id="ov-compliance" title="Fleet compliance">
      <h3>Last {DAYS} days</h3>
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
                last <time datetime={f.last_failed_at} title={dateTime(f.last_failed_at)}>{ago(f.last_failed_at)}</time>
                {f.sample_comment ? <div class="muted small sample">{f.sample_comment}</div> : null}
              </li>
            ))}
          </ol>
        ) : <p class="muted">{noFailingStateText(failingRuns.data?.total)}{failingRuns.data?.total ? <> <a href={unhealthy}>Show them</a></> : null}</p>
      ) : null}
    </Panel>
  )
}
