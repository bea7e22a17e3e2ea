/** What every route and service is handed: database, options, clock, logger, secret key, and the salt side when it runs. */
import type { Db } from './db/client'
import type { Config } from './config'
import type { Clock } from './lib/clock'
import type { Logger } from './lib/log'
import type { SaltClient } from './salt/client'
import type { Metrics } from './features/metrics/registry'
import type { Bus } from './cluster/bus'
import type { PollerStats, PollerStatus, SaltHealthSnapshot, StreamStatus } from './lib/poller-status'

export type { PollerStats, PollerStatus, SaltHealthSnapshot, StreamStatus } from './lib/poller-status'

/** The pollers as the HTTP side sees them: their state, and running one now. */
export interface PollerControl {
  readonly names: string[]
  status(): PollerStatus[]
  stats(): PollerStats[]
  /** Starts a tick now; NotFound for an unknown name, PollerBusy while it runs. */
  runNow(name: string): Promise<void>
}

/** One salt source's running side as Salt health, /metrics and the alert rules see it (contract §15 "Several masters"). */
export interface SourceSide {
  /** The source's name (`default`: the salt settings section). */
  readonly source: string
  /** Its salt-api client. */
  client: SaltClient
  /** Whether its connection is complete (URL, username and password stored). */
  configured(): boolean
  /** How long its master may take to match a job's target before the job goes on without it (tests shorten it). */
  routeDeadlineMs?: number
  pollers: PollerControl
  stream: { status(): StreamStatus }
  health(): SaltHealthSnapshot
  presenceKnown(): boolean
  /** Whether this instance runs the source's work now (its leader; on SQLite always once started). */
  readonly leads: boolean
}

/** What routes and /metrics use of a running salt side (the `default` source's, which also does the fleet-wide work). */
export interface SaltSide extends SourceSide {
  client: SaltClient
  pollers: PollerControl
  /** The event stream's status, and the frames it refused by reason. */
  stream: { status(): StreamStatus; readonly refused: Record<string, number> }
  /** Starts an inventory refresh of the minions matching a glob; RefreshBusy while one runs. */
  refreshInventory(target: string): Promise<{ refresh_id: string; started_at: string }>
  /** The salt side's state for the health view and /metrics. */
  health(): SaltHealthSnapshot
  /** Whether the stored online flags are current: false while salt-api does not answer (presence is then unknown). */
  presenceKnown(): boolean
  /** Every running source's side, `default` (this one) first. */
  sources(): SourceSide[]
}

/** The dependencies of createApp; tests build them around a `:memory:` database. */
export interface AppDeps {
  db: Db
  config: Config
  clock: Clock
  log: Logger
  /** 32-byte AES-256-GCM key for secrets at rest (the salt password). */
  secretKey: Uint8Array
  /** Called after a settings section changes, so pollers and clients pick it up without a restart. */
  onSettingsChanged?: (section: string) => void
  /** Called after a salt source other than `default` is added, changed or removed (its name), so its salt side follows. */
  onSaltSourceChanged?: (name: string) => void
  /** Called when changes to the salt sources may have been missed (the bus reconnected): every one is read again. */
  onSaltSourcesResync?: () => void
  /** The salt side of a running service; absent in tests of the core and in CLI commands. */
  salt?: SaltSide
  /** Request counters for /metrics; createApp makes one when absent. */
  metrics?: Metrics
  /** Set while the database's schema is newer than this build (db/schema-version.ts): no writes are taken then. */
  schemaAhead?: string | null
  /**
   * The cluster bus of a running service (contract §15): features tell the other instances on the database what
   * changed here (settings, credentials, stored activity, forgotten totals). Absent in tests of the core and CLI commands.
   */
  bus?: Pick<Bus, 'publish' | 'stats'>
}
