/** Starting and stopping the service on a data directory: the `serve` command's body, also used by tests. */
import { chmodSync, existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { checkpoint, collationWarning, openDb, openPostgres, type Db } from './db/client'
import { lockDataDir } from './db/serve-lock'
import { ensureFindings } from './features/vulns/watch'
import { attachSearchIndex } from './db/search-index'
import { migrate } from './db/migrate'
import { schemaAhead } from './db/schema-version'
import { createApp, routePatterns } from './app'
import type { Config } from './config'
import type { AppDeps } from './deps'
import { systemClock } from './lib/clock'
import { Logger, type LogFormat } from './lib/log'
import { loadSecretKey } from './lib/secret'
import { bootstrap } from './features/users/bootstrap'
import { applyEnvSalt, loadSettings, readSection } from './features/settings/service'
import { checkSecretKey } from './features/settings/key-check'
import { MAX_BODY } from './http/security'
import { SaltRuntime } from './runtime'
import { SourceRegistry } from './source-registry'
import { SearchIndexer } from './features/activity/search-indexer'
import { DeliverySender } from './features/alerts/sender'
import { send } from './features/alerts/send'
import { instrument } from './http/instrument'
import { closeActivityStreams } from './features/activity/stream'
import { startMemoryGuard } from './lib/memory'
import { removeStaleStaging } from './features/vulns/staging'
import { ClusterNode } from './cluster/node'
import { clusterEngine } from './cluster/engine'
import { FLEET } from './cluster/sources'
import { DEFAULT_SOURCE } from './features/salt-sources/schema'

/** Seconds a connection may stay idle before the server closes it (Bun's default is 10). */
export const IDLE_TIMEOUT_S = 30

/** How long a graceful stop waits for in-flight requests before closing what is left. */
const DRAIN_MS = 10_000

/** RSS above which the serving process collects garbage fully (issue 14's serving target is 150 MB at 50,000 minions). */
const MEMORY_SOFT_LIMIT_MB = 120

/** How often an instance on PostgreSQL checks whether a newer instance migrated the database past it. */
const SCHEMA_CHECK_MS = 15_000

/** Checks the schema once; the first time it is ahead, records it, says so and stops the writers given. */
async function watchSchema(deps: AppDeps, writers: (() => Promise<void>)[]) {
  if (deps.schemaAhead) return
  let ahead: string | null
  try {
    ahead = await schemaAhead(deps.db)
  } catch {
    return // the database does not answer: readiness says so; the next check decides
  }
  if (!ahead) return
  deps.schemaAhead = ahead
  deps.log.error('a newer Saltdeck migrated the database: this instance stops its pollers and takes no writes; upgrade it', { newest_migration: ahead })
  for (const stop of writers) await stop().catch((e) => deps.log.warn('stopping a writer failed', { error: String(e) }))
}

/** `fn` run once: later calls answer the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | null = null
  return () => (done ??= fn())
}

/** Reads the TLS pair; both or neither must be given, and both files must be readable. */
function tlsOptions(config: Config) {
  if (!config.tlsCert && !config.tlsKey) return undefined
  if (!config.tlsCert || !config.tlsKey) throw new Error('--tls-cert and --tls-key go together')
  for (const f of [config.tlsCert, config.tlsKey]) if (!existsSync(f)) throw new Error(`cannot read ${f}`)
  return { cert: Bun.file(config.tlsCert), key: Bun.file(config.tlsKey) }
}

/** Creates the data directory (0700) and makes everything written in it the operator's alone; returns its path. */
function prepareDataDir(config: Config): string {
  const dir = resolve(config.dataDir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  // Everything the service writes in the data directory is the operator's alone (database, WAL, search index, key).
  process.umask(0o077)
  for (const f of ['saltdeck.db', 'saltdeck.db-wal', 'saltdeck.db-shm', 'search.db', 'search.db-wal', 'search.db-shm']) if (existsSync(join(dir, f))) chmodSync(join(dir, f), 0o600)
  return dir
}

/** The configured database: PostgreSQL when a database URL is set (contract §15), else saltdeck.db in `dir`. */
export function openDatabase(config: Config, dir: string): Db {
  return config.databaseUrl ? openPostgres(config.databaseUrl) : openDb(join(dir, 'saltdeck.db'))
}

/** Creates the data directory (0700) and opens, migrates and bootstraps its database. */
export async function openDataDir(config: Config, log = new Logger()): Promise<AppDeps> {
  const dir = prepareDataDir(config)
  const db = openDatabase(config, dir)
  try {
    await migrate(db)
  } catch (e) {
    await db.close()
    throw e
  }
  // Nothing is refused for it: the operator learns why a list may sort differently than it would on SQLite.
  const collation = await collationWarning(db)
  if (collation) log.warn(collation)
  // SQLite's activity search index is a second file (search.db); PostgreSQL's is a table of its own (activity_search).
  if (db.native.engine === 'sqlite') attachSearchIndex(db.native.client)
  const deps: AppDeps = { db, config, clock: systemClock, log, secretKey: loadSecretKey(dir, config.secretKeyFile) }
  deps.schemaAhead = await schemaAhead(db)
  try {
    await checkSecretKey(deps, !deps.schemaAhead)
  } catch (e) {
    await db.close()
    throw e
  }
  if (deps.schemaAhead) {
    // A newer instance migrated the database (or this binary is older than the data directory): write nothing.
    log.error('the database schema is newer than this Saltdeck: serving reads only, no pollers; upgrade this instance', { newest_migration: deps.schemaAhead })
    await loadSettings(deps)
    log.format = readSection(deps, 'logging').log_format as LogFormat
    log.debugOn = config.logDebug
    return deps
  }
  await bootstrap(deps, dir)
  await ensureFindings(deps)
  await applyEnvSalt(deps)
  log.format = readSection(deps, 'logging').log_format as LogFormat
  log.debugOn = config.logDebug
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
  const tls = tlsOptions(config)
  // One service per SQLite data directory, taken before anything is migrated or started; the CLI commands take no
  // lock. On PostgreSQL several instances share the database (contract §15): no lock.
  const dir = prepareDataDir(config)
  const lock = config.databaseUrl ? { release() {} } : lockDataDir(dir)
  let deps: AppDeps
  try {
    deps = await openDataDir(config, log)
  } catch (e) {
    lock.release()
    throw e
  }
  // An upload or import interrupted by a crash left its staging directory (up to 512 MiB and more) behind.
  removeStaleStaging(resolve(config.dataDir), log)
  // This instance on the database (contract §15): its row, the bus (deps.bus from here on) and its leaderships. An
  // instance whose schema is behind the database's takes part in none of it and starts no writer (pollers, stream,
  // indexer, deliveries): it serves reads only.
  const ahead = !!deps.schemaAhead
  const node = new ClusterNode(deps, clusterEngine(deps.db))
  // The salt side starts with serve only, never with createApp (tests and CLI commands start no timers).
  const salt = new SaltRuntime(deps)
  // Every other salt source runs beside it, each with its own client, stream and pollers (contract §15), its work on
  // the instance that leads that source.
  const sources = new SourceRegistry(deps, salt, {}, {
    run(name, rt) {
      rt.startWatching()
      rt.follow()
      node.compete(name, { gained: (takeover) => rt.lead({ takeover }), lost: () => rt.unlead() })
    },
    withdraw: (name) => node.withdraw(name),
  })
  // Each stops once, whether a newer schema (watchSchema) or the service's stop asks first.
  const stopNode = once(() => node.stop())
  const stopSalt = once(async () => {
    await sources.stop()
    await salt.stop()
  })
  if (!ahead) {
    await node.start()
    deps.salt = salt
    deps.onSettingsChanged = (section) => {
      void salt.settingsChanged(section)
      void sources.settingsChanged(section)
    }
    deps.onSaltSourceChanged = (name) => void sources.changed(name)
    deps.onSaltSourcesResync = () => void sources.resync()
    salt.startWatching()
    salt.follow()
    // Each salt source's work runs on its leader only: `default`'s runtime is this one, the others the registry's.
    node.compete(DEFAULT_SOURCE, { gained: (takeover) => salt.lead({ takeover }), lost: () => salt.unlead() })
    await sources.start()
  }
  // The search index follows the activity table within a couple of seconds, whatever wrote the events (SQLite's
  // search.db; PostgreSQL's activity_search, from the queue every insert feeds).
  const search = !ahead ? new SearchIndexer(deps) : null
  void search?.start()
  // Alert deliveries go out from the outbox whatever wrote it; they survive restarts in the database.
  const alerts = new DeliverySender(deps, send)
  if (!ahead) {
    // Fleet-wide work (alert delivery, retention) runs on one instance at a time.
    node.compete(FLEET, {
      gained: () => {
        salt.leadFleet()
        alerts.start()
      },
      async lost() {
        await alerts.stop()
        await salt.unleadFleet()
      },
    })
    await node.lead()
  }
  // On PostgreSQL a newer instance may migrate the shared database while this one runs (a rolling upgrade): this one
  // then gives up its leaderships, stops its writers and takes no more writes (db/schema-version.ts).
  const schemaWatch = deps.db.engine === 'postgres' && !ahead ? setInterval(() => void watchSchema(deps, [stopNode, stopSalt, () => alerts.stop()]), SCHEMA_CHECK_MS) : undefined
  const app = createApp(deps)
  // Serving RSS stays near MEMORY_SOFT_LIMIT_MB: past it, a full collection (lib/memory.ts; counted in /metrics).
  const stopMemoryGuard = startMemoryGuard(MEMORY_SOFT_LIMIT_MB * 1024 * 1024, (seconds) => deps.metrics!.memoryCollection(seconds))
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    tls,
    // Bun's own cap is far above ours: readBody stops reading past 1 MiB and answers our JSON 413 (Bun's would be bare).
    maxRequestBodySize: MAX_BODY * 1024,
    // Set on purpose: the activity stream's keepalives (KEEPALIVE_MS) come well inside it.
    idleTimeout: IDLE_TIMEOUT_S,
    // Never shared: a second process on this port fails to start (Bun's default, stated because it matters: two
    // services would each send every notification).
    reusePort: false,
    // Never Bun's development error page (it shows source lines): an error outside the app is a JSON 500.
    development: false,
    error(e) {
      log.error('request failed outside the app', { error: String(e?.stack ?? e) })
      return new Response(JSON.stringify({ detail: 'Internal Server Error' }), { status: 500, headers: { 'content-type': 'application/json' } })
    },
    // One log line per request with the path only (query strings can carry search terms, and stay short).
    fetch: instrument(deps, routePatterns(), (req) => app.fetch(req)),
  })
  // Elysia reads the client address through its server handle.
  ;(app as unknown as { server: unknown }).server = server
  log.info('saltdeck listening', { url: server.url.href, data_dir: resolve(config.dataDir) })
  return {
    port: server.port!,
    url: server.url.href,
    async stop() {
      // Stop accepting; open activity streams never end by themselves, so end them, then let requests finish.
      stopMemoryGuard()
      clearInterval(schemaWatch)
      const drained = server.stop()
      closeActivityStreams(deps)
      const late = await Promise.race([drained.then(() => false), Bun.sleep(DRAIN_MS).then(() => true)])
      if (late) await server.stop(true)
      // Pollers finish their tick and the event stream writes its pending batch before the WAL checkpoint.
      // Leaderships go back first (their work stops), so another instance takes over at its next try.
      if (!ahead) {
        await stopNode()
        await stopSalt()
      }
      await alerts.stop()
      await search?.stop()
      await checkpoint(deps.db)
      await deps.db.close()
      lock.release()
      log.info('saltdeck stopped')
    },
  }
}
