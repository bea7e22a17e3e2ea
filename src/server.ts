/** Starting and stopping the service on a data directory: the `serve` command's body, also used by tests. */
import { chmodSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { openDb } from './db/client'
import { migrate } from './db/migrate'
import { createApp } from './app'
import type { Config } from './config'
import type { AppDeps } from './deps'
import { systemClock } from './lib/clock'
import { Logger, type LogFormat } from './lib/log'
import { loadSecretKey } from './lib/secret'
import { bootstrap } from './features/auth/service'
import { applyEnvSalt, readSection } from './features/settings/service'
import { MAX_BODY } from './http/security'
import { SaltRuntime } from './salt/runtime'

/** Creates the data directory (0700) and opens, migrates and bootstraps its database. */
export async function openDataDir(config: Config, log = new Logger()): Promise<AppDeps> {
  const dir = resolve(config.dataDir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  const db = openDb(join(dir, 'saltdeck.db'))
  migrate(db)
  const deps: AppDeps = { db, config, clock: systemClock, log, secretKey: loadSecretKey(dir) }
  await bootstrap(deps, dir)
  applyEnvSalt(deps)
  log.format = readSection(deps, 'logging').log_format as LogFormat
  return deps
}

/** A running service: its address and a graceful stop. */
export interface Running {
  port: number
  url: string
  stop(): Promise<void>
}

/** Serves the API on host:port until stopped; stop finishes in-flight requests and checkpoints the WAL. */
export async function serve(config: Config, log = new Logger()): Promise<Running> {
  const deps = await openDataDir(config, log)
  // The salt side starts with serve only, never with createApp (tests and CLI commands start no timers).
  const salt = new SaltRuntime(deps)
  deps.salt = salt
  deps.onSettingsChanged = (section) => void salt.settingsChanged(section)
  salt.start()
  const app = createApp(deps)
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // Bun's own cap is above ours so that our 413 body answers first.
    maxRequestBodySize: MAX_BODY * 2,
    async fetch(req) {
      const t0 = performance.now()
      const res = await app.fetch(req)
      // One line per request; the path only (query strings can carry search terms, never secrets, but stay short).
      log.info('request', { method: req.method, path: new URL(req.url).pathname, status: res.status, ms: Math.round((performance.now() - t0) * 10) / 10 })
      return res
    },
  })
  // Elysia reads the client address through its server handle.
  ;(app as unknown as { server: unknown }).server = server
  log.info('saltdeck listening', { url: server.url.href, data_dir: resolve(config.dataDir) })
  return {
    port: server.port!,
    url: server.url.href,
    async stop() {
      await server.stop()
      await salt.stop()
      deps.db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      deps.db.$client.close()
      log.info('saltdeck stopped')
    },
  }
}
