#!/usr/bin/env bun
/**
 * One HTTP-only serving process for bench/processes.ts: the app and the request wrapper of `saltdeck serve` on a
 * seeded data directory, bound with SO_REUSEPORT so several such processes share one port (the kernel spreads new
 * connections over them). No salt side, pollers, search indexer or alert sender: only reads are measured.
 *
 *   bun bench/serve-http.ts DATA_DIR PORT
 */
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { createApp, routePatterns } from '../src/app'
import { instrument } from '../src/http/instrument'
import { nullLogger } from './harness'

const [dir, port] = process.argv.slice(2)
if (!dir || !port) throw new Error('usage: bun bench/serve-http.ts DATA_DIR PORT')
// The request log still formats and writes its line per request, to /dev/null.
const deps = await openDataDir(loadConfig(process.env, { dataDir: dir, host: '127.0.0.1' }), nullLogger())
const app = createApp(deps)
const server = Bun.serve({ hostname: '127.0.0.1', port: Number(port), reusePort: true, development: false, fetch: instrument(deps, routePatterns(), (req) => app.fetch(req)) })
;(app as unknown as { server: unknown }).server = server
console.log(JSON.stringify({ pid: process.pid, port: server.port }))
process.on('SIGTERM', () => {
  server.stop(true)
  deps.db.$client.close()
  process.exit(0)
})
