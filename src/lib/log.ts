/** Process log lines in JSON or text, switchable at run time; values are bounded so hostile data cannot flood a line. */

import { writeSync } from 'node:fs'

/** The two line formats of `logging.log_format`. */
export type LogFormat = 'json' | 'text'

const MAX_VALUE = 500

/**
 * A line writer that gathers the lines of one turn of the event loop into one write: a busy server logs a line per
 * request, and one write per line was a tenth of a small request's cost. What is pending is written at exit.
 */
export function batchedLines(write: (text: string) => void, flushAtExit: (text: string) => void): (line: string) => void {
  let pending: string[] = []
  const flush = () => {
    if (!pending.length) return
    const text = pending.join('')
    pending = []
    write(text)
  }
  process.on('exit', () => {
    if (pending.length) flushAtExit(pending.join(''))
    pending = []
  })
  return (line) => {
    if (pending.push(line + '\n') === 1) setImmediate(flush)
    else if (pending.length >= 1024) flush()
  }
}

let stdoutLines: ((line: string) => void) | undefined
/** The process's standard output as a batched line writer (one per process). */
const toStdout = (line: string) => (stdoutLines ??= batchedLines((t) => process.stdout.write(t), (t) => writeSync(1, t)))(line)

/** A small structured logger. */
export class Logger {
  constructor(public format: LogFormat = 'json', private out: (line: string) => void = toStdout, public quiet = false, public debugOn = false) {}

  /** Writes one line: a message and bounded fields; debug lines only when `debugOn` (`SALTDECK_LOG_DEBUG`). */
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}) {
    if (this.quiet || (level === 'debug' && !this.debugOn)) return
    const f: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(fields)) f[k] = typeof v === 'string' && v.length > MAX_VALUE ? v.slice(0, MAX_VALUE) + '…' : v
    const ts = new Date().toISOString()
    if (this.format === 'json') this.out(JSON.stringify({ ts, level, msg, ...f }))
    else this.out(`${ts} ${level.toUpperCase()} ${msg}${Object.entries(f).map(([k, v]) => ` ${k}=${JSON.stringify(v)}`).join('')}`)
  }
  debug(msg: string, fields?: Record<string, unknown>) {
    this.log('debug', msg, fields)
  }
  info(msg: string, fields?: Record<string, unknown>) {
    this.log('info', msg, fields)
  }
  warn(msg: string, fields?: Record<string, unknown>) {
    this.log('warn', msg, fields)
  }
  error(msg: string, fields?: Record<string, unknown>) {
    this.log('error', msg, fields)
  }
}
