#!/usr/bin/env bun
/**
 * Start-up time of the release binary: from spawn to the first 200 on /healthz, with an existing data directory.
 *
 *   bun bench/startup.ts [--runs 21] [--binary PATH] [--data-dir DIR]
 *
 * Without --binary it builds one with build.ts into bench/data/bin/. Without --data-dir it makes a fresh directory
 * under bench/data/, starts the binary there once (migrations, first admin) and stops it, so every timed start finds
 * an existing database, as after an upgrade or a restart. Each run picks a free port, spawns `saltdeck serve`,
 * polls GET /healthz every millisecond (a refused connection costs microseconds) and records spawn → first 200, then
 * stops the process with SIGTERM and waits for it to exit. Prints every run and the median.
 */
import { mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseFlags } from '../src/cli'
import { median, r1, releaseBinary, runBinary } from './binary'
import { freePort } from './harness'

const F = parseFlags(process.argv.slice(2))
const RUNS = Number(F.runs ?? 21)
const bin = await releaseBinary(F.binary)
let dataDir = F['data-dir'] ? resolve(F['data-dir']) : ''
const env = { SALTDECK_ADMIN_PASSWORD: 'bench-admin-pw' }
if (!dataDir) {
  dataDir = resolve(import.meta.dir, 'data', 'startup')
  rmSync(dataDir, { recursive: true, force: true })
  mkdirSync(dataDir, { recursive: true })
  const first = await runBinary(bin, dataDir, env)
  await first.stop()
}

const times: number[] = []
for (let i = 0; i < RUNS; i++) {
  const port = freePort()
  const url = `http://127.0.0.1:${port}/healthz`
  const t0 = performance.now()
  const proc = Bun.spawn([bin, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], { env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'ignore' })
  let ms = NaN
  for (;;) {
    try {
      const r = await fetch(url)
      if (r.status === 200) {
        ms = performance.now() - t0
        break
      }
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) throw new Error(`run ${i}: the binary exited with ${proc.exitCode}`)
    if (performance.now() - t0 > 30_000) throw new Error(`run ${i}: no 200 in 30 s`)
    await Bun.sleep(1)
  }
  proc.kill('SIGTERM')
  await proc.exited
  times.push(ms)
  console.log(`run ${String(i + 1).padStart(2)}: ${r1(ms)} ms`)
}
const sorted = [...times].sort((a, b) => a - b)
console.log(JSON.stringify({
  binary: bin, data_dir: dataDir, runs: RUNS,
  median_ms: r1(median(times)), min_ms: r1(sorted[0]!), p90_ms: r1(sorted[Math.floor(0.9 * (sorted.length - 1))]!), max_ms: r1(sorted.at(-1)!),
}))
if (!F['data-dir']) rmSync(join(dataDir), { recursive: true, force: true })
