/** What every route and service is handed: database, options, clock, logger, secret key and change hooks. */
import type { Db } from './db/client'
import type { Config } from './config'
import type { Clock } from './lib/clock'
import type { Logger } from './lib/log'
import type { SaltRuntime } from './salt/runtime'
import type { Metrics } from './features/metrics/registry'

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
  /** The salt side (client, pollers, stream); absent in tests of the core. */
  salt?: SaltRuntime
  /** Request counters for /metrics; createApp makes one when absent. */
  metrics?: Metrics
}
