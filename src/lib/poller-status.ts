/** Shapes of the pollers' and the event stream's state: GET /api/admin/pollers and /metrics; the dashboard reads them too. */

/** One poller's state, as GET /api/admin/pollers shows it. */
export interface PollerStatus {
  name: string
  enabled: boolean
  interval_seconds: number
  running: boolean
  last_started_at: string | null
  last_duration_ms: number | null
  last_error: string | null
  runs: number
  errors: number
  items_processed: number | null
  next_run_at: string | null
}

/** One poller's counters, for /metrics. */
export interface PollerStats {
  name: string
  runs: number
  errors: number
  totalMs: number
  lastDurationMs: number | null
}

/** The event stream's state, as the pollers page and /metrics show it. */
export interface StreamStatus {
  enabled: boolean
  connected: boolean
  events_ingested: number
  frames_skipped: number
  reconnects: number
  last_error: string | null
}
