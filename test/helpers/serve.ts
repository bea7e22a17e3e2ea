/** Spawns `saltdeck serve` as a real process on port 0 and waits for its address. */
import { spawn, type Subprocess } from 'bun'
import { resolve } from 'node:path'
import { freshPostgresUrl, TEST_ENGINE } from './migrations'

/** A served instance: base URL, process, captured output. */
export interface Served {
  url: string
  proc: Subprocess
  output: () => string
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number>
}

/** The PostgreSQL database of each data directory served in this process: a restart serves the same data. */
const databases = new Map<string, string>()

/**
 * The database environment of a serve: under SALTDECK_TEST_ENGINE=postgres (and no URL given) a fresh PostgreSQL
 * database per data directory, the same one again when the directory is served again; nothing on SQLite.
 */
export async function databaseEnv(dataDir: string, env: Record<string, string>): Promise<Record<string, string>> {
  if (TEST_ENGINE !== 'postgres' || env.SALTDECK_DATABASE_URL !== undefined) return {}
  const key = resolve(dataDir)
  let url = databases.get(key)
  if (!url) databases.set(key, (url = await freshPostgresUrl()))
  return { SALTDECK_DATABASE_URL: url }
}

/** Starts `cmd` (default: bun run src/main.ts) with `serve --port 0 --data-dir dir [args]` and waits for the listening line. */
export async function startServe(dataDir: string, env: Record<string, string> = {}, cmd: string[] = ['bun', 'run', 'src/main.ts'], opts: { args?: string[]; cwd?: string } = {}): Promise<Served> {
  const proc = spawn([...cmd, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...(opts.args ?? [])], {
    cwd: opts.cwd,
    env: { ...process.env, ...(await databaseEnv(dataDir, env)), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const decoder = new TextDecoder()
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) out += decoder.decode(chunk)
  }
  void pump(proc.stdout as ReadableStream<Uint8Array>)
  void pump(proc.stderr as ReadableStream<Uint8Array>)
  const deadline = Date.now() + 15_000
  for (;;) {
    // The listening line in either log format: `"url":"http://…"` (json) or `url="http://…"` (text).
    const m = /"?url"?[:=]"(https?:\/\/[^"]+)"/.exec(out)
    if (m) {
      return {
        url: m[1]!.replace(/\/$/, ''),
        proc,
        output: () => out,
        async stop() {
          proc.kill('SIGTERM')
          return await proc.exited
        },
      }
    }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start:\n${out}`)
    await Bun.sleep(25)
  }
}
