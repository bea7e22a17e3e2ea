/**
 * Small pieces the benchmark scripts share: a free port, a helper process that announces itself with one JSON line
 * on stdout (the salt-api stand-ins, the HTTP-only server), a process's CPU time from /proc, wrk's durations, and a
 * service log that costs what the real one does but goes nowhere.
 */
import { openSync, readFileSync, writeSync } from 'node:fs'
import type { Subprocess } from 'bun'
import { Logger, batchedLines } from '../src/lib/log'

/** A TCP port nothing listens on right now (bound once on 127.0.0.1, then released). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const p = s.port!
  s.stop(true)
  return p
}

/** Starts `cmd` and waits for the JSON object it prints as its first line (its URL, its pid …). */
export async function spawnAnnounced<T>(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<{ proc: Subprocess; info: T }> {
  const proc = Bun.spawn(cmd, { ...opts, stdout: 'pipe', stderr: 'inherit' })
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  let text = ''
  while (!text.includes('\n')) {
    const r = await reader.read()
    if (r.done) throw new Error(`${cmd.join(' ')} exited before it announced itself`)
    text += new TextDecoder().decode(r.value)
  }
  return { proc, info: JSON.parse(text.split('\n')[0]!) as T }
}

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms, USER_HZ 100). */
export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}

/** One of wrk's durations ("812.00us", "3.25ms", "1.20s", "2.00m") in milliseconds; NaN when it is none. */
export function wrkMs(s: string): number {
  const m = s.match(/^([\d.]+)(us|ms|s|m)$/)
  if (!m) return NaN
  const v = Number(m[1])
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000
}

/** A JSON logger whose lines are formatted and written in batches as to stdout, but to /dev/null. */
export function nullLogger(): Logger {
  const fd = openSync('/dev/null', 'w')
  const toNull = (text: string) => void writeSync(fd, text)
  return new Logger('json', batchedLines(toNull, toNull))
}
