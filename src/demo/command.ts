/** `saltdeck demo`: the service on a temporary data directory holding a seeded fleet, removed again when it stops. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../config'
import { Logger } from '../lib/log'
import { randomPassword } from '../features/users/bootstrap'
import { openDataDir, serve, type Running } from '../server'
import { DEMO_DAYS, seedDemo } from './fleet'

/** A running demo: the service, its login, and a stop that removes the data directory. */
export interface Demo {
  url: string
  password: string
  dataDir: string
  stop(): Promise<void>
}

/**
 * The service log without its info lines (one per request would bury the address the demo prints); warnings and
 * errors still show, in whichever format the settings give.
 */
const demoLog = () => new Logger('text', (line) => {
  if (!/^\S+ INFO |"level":"info"/.test(line)) console.log(line)
})

/** Seeds a fresh temporary data directory and serves it with `config`'s host and port; `print` tells the operator how to sign in. */
export async function startDemo(config: Config, print: (line: string) => void): Promise<Demo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'saltdeck-demo-'))
  // Always SQLite in the temporary directory: the made-up fleet never goes into the operator's PostgreSQL.
  // A known first password (no change asked at first login): the demo is for looking, and its data is thrown away.
  const password = randomPassword()
  const demoConfig: Config = { ...config, dataDir, databaseUrl: null, adminPassword: password, saltUrl: null, saltUsername: null, saltPassword: null, saltEauth: null }
  let running: Running | null = null
  try {
    const deps = await openDataDir(demoConfig, new Logger('text', () => {}, true))
    const t0 = performance.now()
    let seeded: { minions: number; runs: number }
    try {
      seeded = await seedDemo(deps)
    } finally {
      await deps.db.close()
    }
    running = await serve(demoConfig, demoLog())
    const url = running.url
    print(`Saltdeck demo: ${seeded.minions} made-up minions, ${DEMO_DAYS} days of state runs (${seeded.runs}), packages, vulnerabilities and alerts; no salt needed`)
    print(`  open   ${url}`)
    print(`  login  admin / ${password}`)
    print(`  data   ${dataDir} (seeded in ${Math.round(performance.now() - t0)} ms; removed when the demo stops: Ctrl-C)`)
    const r = running
    return {
      url, password, dataDir,
      async stop() {
        await r.stop()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } catch (e) {
    await running?.stop()
    rmSync(dataDir, { recursive: true, force: true })
    throw e
  }
}
