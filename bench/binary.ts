/** Shared by the appliance benchmarks: build the release binary, find a free port, run the binary, wait for health. */
import { mkdirSync } from 'node:fs'
import { freePort } from './harness'
import { join, resolve } from 'node:path'
import { spawn, type Subprocess } from 'bun'

const ROOT = resolve(import.meta.dir, '..')

/** Builds `bun build.ts <bench/data/bin/saltdeck>` (dashboard bundle + compile) unless `given` names a binary. */
export async function releaseBinary(given?: string): Promise<string> {
  if (given) return resolve(given)
  const dir = join(ROOT, 'bench', 'data', 'bin')
  mkdirSync(dir, { recursive: true })
  const out = join(dir, 'saltdeck')
  const p = spawn(['bun', 'build.ts', out], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()])
  if (code !== 0) throw new Error(`bun build.ts failed (${code}):\n${stdout}\n${stderr}`)
  return out
}

/** A running binary. */
export interface Running {
  url: string
  proc: Subprocess
  stop(): Promise<void>
}

/** Starts `bin serve` on a free port with `dataDir` and resolves once /healthz answers 200. */
export async function runBinary(bin: string, dataDir: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<Running> {
  const port = freePort()
  const url = `http://127.0.0.1:${port}`
  const proc = spawn([bin, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], {
    env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'inherit',
  })
  const stop = async () => {
    proc.kill('SIGTERM')
    await Promise.race([proc.exited, Bun.sleep(15_000)])
    if (proc.exitCode === null) proc.kill('SIGKILL')
  }
  const end = Date.now() + timeoutMs
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return { url, proc, stop }
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) throw new Error(`${bin} exited with ${proc.exitCode}`)
    if (Date.now() > end) {
      await stop()
      throw new Error(`${bin} did not answer /healthz in ${timeoutMs} ms`)
    }
    await Bun.sleep(20)
  }
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** Rounds to one decimal for the result tables. */
export const r1 = (x: number) => Math.round(x * 10) / 10
