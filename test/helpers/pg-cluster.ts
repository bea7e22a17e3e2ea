/**
 * A throwaway PostgreSQL cluster for the tests: Debian's initdb and pg_ctl run as the `postgres` user (initdb refuses
 * root), on a free port of 127.0.0.1, collation C (text sorts bytewise, as SQLite sorts it), trust authentication,
 * no fsync (the cluster dies with the run). One cluster per test process, started on first use and stopped at exit.
 */
import { spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { processAlive } from '../../src/lib/process-alive'

/** A running cluster: its port and the URL of a database in it. */
export interface PgCluster {
  port: number
  dir: string
  url(database?: string): string
}

/** The bin directory of the newest PostgreSQL installed (Debian keeps each major under /usr/lib/postgresql). */
export function pgBinDir(): string {
  const root = '/usr/lib/postgresql'
  const majors = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).map(Number).sort((a, b) => b - a) : []
  if (!majors.length) throw new Error('PostgreSQL is not installed (apt-get install postgresql); .ci/run installs it')
  return join(root, String(majors[0]), 'bin')
}

/** Runs a PostgreSQL tool as the postgres user when we are root, else as ourselves; throws with its output on failure. */
function tool(name: string, args: string[]) {
  const bin = join(pgBinDir(), name)
  const root = process.getuid?.() === 0
  const r = root ? spawnSync('runuser', ['-u', 'postgres', '--', bin, ...args], { encoding: 'utf8' }) : spawnSync(bin, args, { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${name} ${args.join(' ')} failed (${r.status ?? r.signal ?? r.error?.message}): ${r.stderr || r.stdout}`)
  return r.stdout
}

/** A port nobody listens on now. */
function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

/** The file in a cluster's directory naming the test process that owns it. */
const OWNER = 'owner.pid'

/** Whether a cluster's postmaster runs (the first line of its pid file names it). */
function running(dir: string): boolean {
  const pidFile = join(dir, 'data', 'postmaster.pid')
  return existsSync(pidFile) && processAlive(Number(readFileSync(pidFile, 'utf8').split('\n')[0]))
}

/**
 * Stops and removes the clusters of test processes that died without their exit hook (killed by a timeout or by
 * hand): each is a running postgres and a data directory under /tmp, and a few dozen filled the disk once. A
 * directory without an owner file (made by something else, or being made now) goes only when no postgres runs in it
 * and it is an hour old.
 */
export function sweepStaleClusters(root = tmpdir()) {
  for (const name of readdirSync(root)) {
    if (!name.startsWith('saltdeck-pg-')) continue
    const dir = join(root, name)
    try {
      const ownerFile = join(dir, OWNER)
      const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : null
      if (owner !== null ? processAlive(owner) : running(dir) || Date.now() - statSync(dir).mtimeMs < 3_600_000) continue
      stopCluster({ port: 0, dir, url: () => '' })
    } catch {
      // Gone meanwhile, or not ours to read: leave it.
    }
  }
}

/** Starts a new cluster (about 1-2 s); `stopCluster` or the process's exit ends it and removes its files. */
export function startCluster(): PgCluster {
  sweepStaleClusters()
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-pg-'))
  writeFileSync(join(dir, OWNER), String(process.pid))
  if (process.getuid?.() === 0) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
    const uid = Number(pw.stdout.trim())
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  tool('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--locale=C', '-E', 'UTF8', '--no-sync'])
  const port = freePort()
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`
  tool('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start'])
  const cluster: PgCluster = { port, dir, url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}` }
  process.once('exit', () => stopCluster(cluster))
  watchOwner(cluster)
  return cluster
}

/**
 * A detached watchdog that stops and removes the cluster once this process is gone: `bun test` fires no 'exit' event,
 * and a test run killed by a timeout fires nothing at all, so each run used to leave its cluster running.
 */
function watchOwner(c: PgCluster) {
  const stop = process.getuid?.() === 0 ? `runuser -u postgres -- ${join(pgBinDir(), 'pg_ctl')}` : join(pgBinDir(), 'pg_ctl')
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${stop} -D '${join(c.dir, 'data')}' -m immediate stop >/dev/null 2>&1; rm -rf '${c.dir}'`
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref()
}

/** Stops a cluster at once and removes its files. */
export function stopCluster(c: PgCluster) {
  try {
    tool('pg_ctl', ['-D', join(c.dir, 'data'), '-m', 'immediate', 'stop'])
  } catch {
    // Already stopped.
  }
  rmSync(c.dir, { recursive: true, force: true })
}

let shared: PgCluster | undefined

/** The test process's one cluster, started on first use. */
export function sharedCluster(): PgCluster {
  shared ??= startCluster()
  return shared
}
