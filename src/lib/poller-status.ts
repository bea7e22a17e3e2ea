/** Shapes of the pollers' and the event stream's state: GET /api/admin/pollers and /metrics; the dashboard reads them too. */

/** The jobs and fleet pollers' interval while the event stream is down, however long their own (0 included). */
export const CATCH_UP_SECONDS = 30

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
  /** Whether its last tick was skipped because the salt-master does not answer (it runs once the master does). */
  waiting_for_master: boolean
}

/** One poller's counters, for /metrics. */
export interface PollerStats {
  name: string
  runs: number
  errors: number
  totalMs: number
  lastDurationMs: number | null
  /** Whether its last tick was skipped because the salt-master does not answer. */
  waitingForMaster: boolean
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

/** What presence holds back because of the master: `down` (it does not answer), `grace` (it answered again lately), or null. */
export type PresenceHold = 'down' | 'grace' | null

/** The salt side's state as the health view reads it (times are epoch ms). */
export interface SaltHealthSnapshot {
  /** The master's Salt version; null until known. */
  masterVersion: string | null
  /** Whether salt-api answered lately; `up` null before the first exchange. */
  reachability: { up: boolean | null; since: number | null; error: string | null }
  /**
   * Whether the salt-master answers through salt-api (`up` null while unknown), and what presence holds back: `down`
   * while it does not answer (presence unknown, nobody goes offline), `grace` until `graceUntil` after it answers again.
   */
  master: { up: boolean | null; since: number | null; error: string | null; hold: PresenceHold; graceUntil: number | null; checkSeconds: number }
  stream: { state: 'connected' | 'reconnecting' | 'broken' | 'disabled'; since: number; lastEventAt: number | null; reconnectsLastHour: number; lastError: string | null }
  /** Whether the jobs and fleet pollers run at their catch-up interval because the stream is down. */
  covering: boolean
  pollers: { name: string; interval: number; lastSuccess: number | null; lagSeconds: number | null; lastError: string | null }[]
}
